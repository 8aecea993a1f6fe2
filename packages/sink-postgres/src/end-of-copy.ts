/**
 * PostgreSQL's COPY takes a line holding only `\.` (then LF, CR or CRLF) for the end of the data,
 * even in CSV format: whatever follows it is dropped without an error. Wrapping those two bytes in
 * quotes keeps them as data wherever they stand, because in PostgreSQL's CSV every quote toggles
 * quoting (escape and quote being the same byte): on a line of its own, `"\."` is a quoted field
 * holding `\.`; inside a quoted value that spans lines (where the server reads `\.` as data
 * already), the added quotes close and reopen the quoting around it, and the value is unchanged.
 * Both checked against PostgreSQL 15 (see the sink's tests), so no quote before a marker line has
 * to be counted.
 *
 * Almost no body holds such a line: the common path is two native searches that find nothing, and
 * the body goes to the server as it is.
 */

const LF = 10
const CR = 13
const BACKSLASH = 92
const DOT = 46
/** The marker at the start of a line, found with the newline that ends the line before. */
const AFTER_LF = Buffer.from('\n\\.')
const AFTER_CR = Buffer.from('\r\\.')

/**
 * The body with every `\.` line's two bytes wrapped in `quote` (the COPY CSV dialect's quote byte);
 * the body itself when it has no such line.
 */
export function quoteEndOfCopyLines(body: Uint8Array, quote: number): Uint8Array {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.length)
  const markers = markerLines(bytes)
  if (markers.length === 0) return body
  const quoted = Buffer.from([quote, BACKSLASH, DOT, quote])
  const pieces: Uint8Array[] = []
  let from = 0
  for (const at of markers) {
    pieces.push(bytes.subarray(from, at), quoted)
    from = at + 2
  }
  pieces.push(bytes.subarray(from))
  return Buffer.concat(pieces)
}

/** Where each line holding only `\.` starts, in order. */
function markerLines(bytes: Buffer): number[] {
  const starts: number[] = []
  if (isMarkerLine(bytes, 0)) starts.push(0)
  for (const marker of [AFTER_LF, AFTER_CR]) {
    for (let at = bytes.indexOf(marker); at !== -1; at = bytes.indexOf(marker, at + 1))
      if (isMarkerLine(bytes, at + 1)) starts.push(at + 1)
  }
  return starts.sort((a, b) => a - b)
}

function isMarkerLine(bytes: Buffer, at: number): boolean {
  if (bytes[at] !== BACKSLASH || bytes[at + 1] !== DOT) return false
  const next = bytes[at + 2]
  return next === undefined || next === LF || next === CR
}
