/**
 * The top-level keys of a JSON object and the source text of their values, found without parsing:
 * a value is judged by its text (`jsonValueType`), as a sink reads it, not by what JSON.parse makes
 * of it (`1.0` is a double, `9007199254740993` a long).
 */
const QUOTE = 34
const COMMA = 44
const COLON = 58
const OPEN_BRACKET = 91
const BACKSLASH = 92
const CLOSE_BRACKET = 93
const OPEN_BRACE = 123
const CLOSE_BRACE = 125

/** One decoder for every call: making one per key was a measurable share of a push source's CPU. */
const utf8 = new TextDecoder()

const STRUCTURAL = new Uint8Array(256)
for (const c of [QUOTE, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET, COMMA, COLON]) STRUCTURAL[c] = 1

/**
 * The [start, end) byte ranges of one record's top-level keys (quotes excluded) and of their values
 * (the bytes between the colon and the next comma or the closing brace), in reusable arrays.
 */
export class KeyRanges {
  count = 0
  starts = new Int32Array(16)
  ends = new Int32Array(16)
  valueStarts = new Int32Array(16)
  valueEnds = new Int32Array(16)

  push(start: number, end: number): void {
    if (this.count === this.starts.length) {
      this.starts = grown(this.starts)
      this.ends = grown(this.ends)
      this.valueStarts = grown(this.valueStarts)
      this.valueEnds = grown(this.valueEnds)
    }
    this.starts[this.count] = start
    this.ends[this.count] = end
    // An empty value until its colon and end are seen: a record cut short has none.
    this.valueStarts[this.count] = end
    this.valueEnds[this.count++] = end
  }

  /** The keys as strings: the raw bytes may hold JSON escapes (`\u0062` is `b`). */
  decode(bytes: Uint8Array): string[] {
    const keys: string[] = []
    for (let k = 0; k < this.count; k++) {
      const raw = utf8.decode(bytes.subarray(this.starts[k], this.ends[k]))
      keys.push(raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw)
    }
    return keys
  }

  /** The source text of key `k`'s value, without the whitespace around it. */
  value(bytes: Uint8Array, k: number): string {
    return utf8.decode(bytes.subarray(this.valueStarts[k], this.valueEnds[k])).trim()
  }
}

function grown(array: Int32Array): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(array.length * 2)
  bigger.set(array)
  return bigger
}

/**
 * Finds the top-level keys of the JSON object in bytes[from, to), each string at depth 1 that opens
 * the object or follows a comma, and the value after each.
 */
export function findKeys(bytes: Uint8Array, from: number, to: number, out: KeyRanges): void {
  out.count = 0
  let depth = 0
  let keyNext = false
  for (let i = from; i < to; i++) {
    const c = bytes[i]!
    // Most bytes (digits, letters, spaces) change nothing: one table lookup passes them.
    if (STRUCTURAL[c] === 0) continue
    if (c === QUOTE) {
      let j = i + 1
      for (let d = bytes[j]; j < to && d !== QUOTE; d = bytes[j]) j += d === BACKSLASH ? 2 : 1
      if (depth === 1 && keyNext) out.push(i + 1, j)
      keyNext = false
      i = j
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++
      keyNext = depth === 1
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth === 1 && out.count > 0) out.valueEnds[out.count - 1] = i
      depth--
    } else if (c === COMMA) {
      keyNext = depth === 1
      if (keyNext && out.count > 0) out.valueEnds[out.count - 1] = i
    } else if (c === COLON) {
      keyNext = false
      if (depth === 1 && out.count > 0) out.valueStarts[out.count - 1] = i + 1
    }
  }
}
