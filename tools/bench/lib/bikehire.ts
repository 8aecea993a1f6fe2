/** The Sample source's bikehire rows as sink batch bodies of about `batchBytes` each. */
import { BikehireEncoder, type BikehireFormat } from '@skippr/source-sample'

export interface Body {
  readonly body: Uint8Array
  readonly rows: number
}

/** Rows encoded per step: small against a 10 MB batch, so batches end close to the size asked. */
const STEP_ROWS = 10_000

export function bikehireBodies(rows: number, batchBytes: number, format: BikehireFormat, seed = 1): Body[] {
  const encoder = new BikehireEncoder(seed, format)
  const bodies: Body[] = []
  let pieces: Uint8Array[] = []
  let pieceRows = 0
  let bytes = 0
  for (let row = 0; row < rows; row += STEP_ROWS) {
    const count = Math.min(STEP_ROWS, rows - row)
    const piece = encoder.encode(row, count).slice()
    pieces.push(piece)
    pieceRows += count
    bytes += piece.length
    if (bytes >= batchBytes || row + count >= rows) {
      bodies.push({ body: Buffer.concat(pieces), rows: pieceRows })
      pieces = []
      pieceRows = 0
      bytes = 0
    }
  }
  return bodies
}
