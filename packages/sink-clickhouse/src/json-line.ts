/**
 * One JSON line read from its bytes: whether it is a JSON object exactly as `JSON.parse` would
 * accept it (RFC 8259: no trailing comma, no leading zero, escapes and control characters checked),
 * and the byte range of each top-level member's key and value, with what kind of value it is. The
 * body is valid UTF-8 (the caller checks), so only ASCII bytes need looking at.
 */

/** A string without a backslash: its bytes between the quotes are its value's UTF-8. */
export const PLAIN_STRING = 0
/** A string with escapes: its value is what JSON.parse makes of its text. */
export const ESCAPED_STRING = 1
/** `null`. */
export const NULL_VALUE = 2
/** A number, `true`, `false`, an object or an array: its text is the value as written. */
export const OTHER_VALUE = 3

const TAB = 9
const LF = 10
const CR = 13
const SPACE = 32
const QUOTE = 34
const PLUS = 43
const COMMA = 44
const MINUS = 45
const DOT = 46
const ZERO = 48
const NINE = 57
const N = 110
const COLON = 58
const OPEN_BRACKET = 91
const BACKSLASH = 92
const CLOSE_BRACKET = 93
const OPEN_BRACE = 123
const CLOSE_BRACE = 125
/** Deeper values are left to JSON.parse, which has no recursion to run out of. */
const MAX_DEPTH = 512

/** Bytes after a backslash that make an escape (`u` then takes 4 hex digits). */
const ESCAPES = new Uint8Array(256)
for (const c of '"\\/bfnrtu') ESCAPES[c.charCodeAt(0)] = 1
const HEX = new Uint8Array(256)
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1
const LITERALS = [Buffer.from('true'), Buffer.from('false'), Buffer.from('null')]

/** Not a JSON object (or one too deep to read here). */
const INVALID = -1

/** A reader of lines, its arrays reused from line to line. */
export class JsonLine {
  /** Top-level members of the line last read, in order, a repeated key as often as it appears. */
  count = 0
  keyStarts = new Int32Array(16)
  keyEnds = new Int32Array(16)
  /** Whether the key has a backslash, and so must be decoded. */
  keyEscaped = new Uint8Array(16)
  valueStarts = new Int32Array(16)
  valueEnds = new Int32Array(16)
  kinds = new Uint8Array(16)
  private bytes: Uint8Array = new Uint8Array(0)
  private end = 0
  /** Set by `string`: whether the string just read has a backslash. */
  private escaped = false

  /** Reads bytes[start, end); false when that is not a JSON object. */
  read(bytes: Uint8Array, start: number, end: number): boolean {
    this.bytes = bytes
    this.end = end
    this.count = 0
    let i = this.space(start)
    if (bytes[i] !== OPEN_BRACE) return false
    i = this.space(i + 1)
    if (bytes[i] === CLOSE_BRACE) return this.space(i + 1) === end
    for (;;) {
      if (bytes[i] !== QUOTE) return false
      const keyStart = i + 1
      const keyEnd = this.string(i)
      if (keyEnd === INVALID) return false
      const keyEscaped = this.escaped
      i = this.space(keyEnd)
      if (bytes[i] !== COLON) return false
      const valueStart = this.space(i + 1)
      const valueEnd = this.value(valueStart, 1)
      if (valueEnd === INVALID) return false
      this.push(keyStart, keyEnd - 1, keyEscaped, valueStart, valueEnd)
      i = this.space(valueEnd)
      if (bytes[i] === CLOSE_BRACE) return this.space(i + 1) === end
      if (bytes[i] !== COMMA) return false
      i = this.space(i + 1)
    }
  }

  /** Records a member (its key without the quotes) just after its value was read. */
  private push(
    keyStart: number,
    keyEnd: number,
    keyEscaped: boolean,
    valueStart: number,
    valueEnd: number,
  ): void {
    if (this.count === this.kinds.length) this.grow()
    const k = this.count++
    this.keyStarts[k] = keyStart
    this.keyEnds[k] = keyEnd
    this.keyEscaped[k] = keyEscaped ? 1 : 0
    this.valueStarts[k] = valueStart
    this.valueEnds[k] = valueEnd
    const first = this.bytes[valueStart]
    // A string value is the last string read, so `escaped` is still its own.
    if (first === QUOTE) this.kinds[k] = this.escaped ? ESCAPED_STRING : PLAIN_STRING
    else this.kinds[k] = first === N ? NULL_VALUE : OTHER_VALUE
  }

  private grow(): void {
    const twice = <T extends Int32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
      const b = make(a.length * 2)
      b.set(a)
      return b
    }
    this.keyStarts = twice(this.keyStarts, (n) => new Int32Array(n))
    this.keyEnds = twice(this.keyEnds, (n) => new Int32Array(n))
    this.keyEscaped = twice(this.keyEscaped, (n) => new Uint8Array(n))
    this.valueStarts = twice(this.valueStarts, (n) => new Int32Array(n))
    this.valueEnds = twice(this.valueEnds, (n) => new Int32Array(n))
    this.kinds = twice(this.kinds, (n) => new Uint8Array(n))
  }

  private space(from: number): number {
    const b = this.bytes
    let i = from
    while (i < this.end) {
      const c = b[i]
      if (c !== SPACE && c !== TAB && c !== CR && c !== LF) break
      i++
    }
    return i
  }

  /** The index after the value starting at `i`, or INVALID. */
  private value(i: number, depth: number): number {
    const c = this.bytes[i]
    if (c === QUOTE) return this.string(i)
    if (c === OPEN_BRACE || c === OPEN_BRACKET) return depth < MAX_DEPTH ? this.nested(i, depth + 1) : INVALID
    if (c === MINUS || (c !== undefined && c >= ZERO && c <= NINE)) return this.number(i)
    for (const literal of LITERALS) if (c === literal[0]) return this.literal(i, literal)
    return INVALID
  }

  /** An object or array inside a value: its members are checked, not recorded. */
  private nested(open: number, depth: number): number {
    const b = this.bytes
    const isObject = b[open] === OPEN_BRACE
    const close = isObject ? CLOSE_BRACE : CLOSE_BRACKET
    let i = this.space(open + 1)
    if (b[i] === close) return i + 1
    for (;;) {
      if (isObject) {
        if (b[i] !== QUOTE) return INVALID
        i = this.string(i)
        if (i === INVALID) return INVALID
        i = this.space(i)
        if (b[i] !== COLON) return INVALID
        i = this.space(i + 1)
      }
      i = this.value(i, depth)
      if (i === INVALID) return INVALID
      i = this.space(i)
      if (b[i] === close) return i + 1
      if (b[i] !== COMMA) return INVALID
      i = this.space(i + 1)
    }
  }

  /** The index after the string whose opening quote is at `open`, or INVALID; sets `escaped`. */
  private string(open: number): number {
    const b = this.bytes
    this.escaped = false
    for (let i = open + 1; i < this.end; i++) {
      const c = b[i] as number
      if (c === QUOTE) return i + 1
      if (c < SPACE) return INVALID
      if (c !== BACKSLASH) continue
      this.escaped = true
      const e = b[i + 1] as number
      if (!ESCAPES[e]) return INVALID
      if (e === 117 /* u */) {
        for (let h = i + 2; h < i + 6; h++) if (h >= this.end || !HEX[b[h] as number]) return INVALID
        i += 5
      } else i++
    }
    return INVALID
  }

  /** `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?` from `start`. */
  private number(start: number): number {
    const b = this.bytes
    let i = start
    if (b[i] === MINUS) i++
    if (b[i] === ZERO) i++
    else if (!this.isDigit(i)) return INVALID
    else i = this.digits(i)
    if (b[i] === DOT) {
      if (!this.isDigit(i + 1)) return INVALID
      i = this.digits(i + 1)
    }
    if (b[i] === 101 /* e */ || b[i] === 69 /* E */) {
      i++
      if (b[i] === PLUS || b[i] === MINUS) i++
      if (!this.isDigit(i)) return INVALID
      i = this.digits(i)
    }
    return i
  }

  private isDigit(i: number): boolean {
    const c = this.bytes[i]
    return i < this.end && c !== undefined && c >= ZERO && c <= NINE
  }

  private digits(from: number): number {
    let i = from
    while (this.isDigit(i)) i++
    return i
  }

  private literal(start: number, literal: Uint8Array): number {
    if (start + literal.length > this.end) return INVALID
    for (let k = 0; k < literal.length; k++) if (this.bytes[start + k] !== literal[k]) return INVALID
    return start + literal.length
  }
}
