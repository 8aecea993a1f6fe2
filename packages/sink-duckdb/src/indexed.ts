/**
 * Load files whose every record carries its index, for the search for the records DuckDB refuses
 * (diagnose.ts): a record's index is its place among the part's records as connector-api's
 * `recordRanges` counts them, which is how a refused row is named (connector-api's sink.ts).
 * DuckDB's readers give rows in no order they promise and skip or null the ones they cannot read;
 * an index read back from the row itself names it whatever they do.
 *
 * Each record keeps its own bytes, so DuckDB reads its values as the load reads them.
 */

/** A record's byte range in its body, [start, end) without its newline. */
export type RecordRange = readonly [number, number]

const NEWLINE = Uint8Array.of(0x0a)
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d

/** CSV: each record with its index as a first field, `17,<record>`. */
export function indexedCsv(body: Uint8Array, ranges: readonly RecordRange[]): Uint8Array {
  const pieces: Uint8Array[] = []
  for (const [i, [start, end]] of ranges.entries())
    pieces.push(Buffer.from(`${i},`), body.subarray(start, end), NEWLINE)
  return Buffer.concat(pieces)
}

export interface IndexedJsonl {
  readonly bytes: Uint8Array
  /** The records written, in order. */
  readonly written: readonly number[]
  /**
   * Records that are neither a JSON object nor `null`: read_json refuses those (`Expected OBJECT`,
   * or Malformed JSON), and the index has nowhere to go in them, so they are not written.
   */
  readonly notObjects: readonly number[]
}

/**
 * JSON lines: each object with its index as a first key, `{"<key>":17,<the object's keys>}`. A
 * `null` line, which read_json takes for a record of NULLs, is written as `{"<key>":17}`. `key`
 * must differ from every field name. `rows` picks the records to write (all by default).
 */
export function indexedJsonl(
  body: Uint8Array,
  ranges: readonly RecordRange[],
  key: string,
  rows: Iterable<number> = ranges.keys(),
): IndexedJsonl {
  const pieces: Uint8Array[] = []
  const written: number[] = []
  const notObjects: number[] = []
  const name = JSON.stringify(key)
  for (const i of rows) {
    const [start, end] = ranges[i]!
    const first = skipBlanks(body, start, end)
    if (body[first] === OPEN_BRACE) {
      // `{}` takes no comma after the index; any other object one before its first key.
      const empty = body[skipBlanks(body, first + 1, end)] === CLOSE_BRACE
      pieces.push(Buffer.from(`{${name}:${i}${empty ? '' : ','}`), body.subarray(first + 1, end), NEWLINE)
    } else if (isNull(body, first, end)) pieces.push(Buffer.from(`{${name}:${i}}`), NEWLINE)
    else {
      notObjects.push(i)
      continue
    }
    written.push(i)
  }
  return { bytes: Buffer.concat(pieces), written, notObjects }
}

/** The first byte at or after `from` that is not JSON whitespace within a line, or `end`. */
function skipBlanks(body: Uint8Array, from: number, end: number): number {
  let at = from
  while (at < end && (body[at] === 0x20 || body[at] === 0x09 || body[at] === 0x0d)) at++
  return at
}

const NULL = Buffer.from('null')

function isNull(body: Uint8Array, first: number, end: number): boolean {
  const after = first + NULL.length
  return after <= end && NULL.equals(body.subarray(first, after)) && skipBlanks(body, after, end) === end
}
