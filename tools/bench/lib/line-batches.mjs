// Runs of whole lines of a CSV file, its header line skipped, cut after a newline about every
// `batchBytes`: the batches the floors land (pg-floor.mjs, duckdb-floor.mjs). Plain JavaScript, so no
// loader's start-up is counted.
import { open } from 'node:fs/promises'

const NEWLINE = 0x0a

/** The file's runs of lines, in order: `next()` gives the next one, or undefined at the end. */
export async function lineBatches(file, batchBytes) {
  const handle = await open(file)
  const size = (await handle.stat()).size
  let position = 0
  let claims = Promise.resolve()

  async function read() {
    if (position >= size) return undefined
    const buffer = Buffer.allocUnsafe(batchBytes)
    const { bytesRead } = await handle.read(buffer, 0, batchBytes, position)
    const atEnd = position + bytesRead >= size
    const end = atEnd ? bytesRead : buffer.lastIndexOf(NEWLINE, bytesRead - 1) + 1
    if (end === 0) throw new Error(`a line of ${file} is longer than ${batchBytes} bytes`)
    const start = position === 0 ? buffer.indexOf(NEWLINE) + 1 : 0
    position += end
    return buffer.subarray(start, end)
  }

  return {
    /** Callers may overlap: each gets the run after the previous caller's. */
    next() {
      const body = claims.then(read)
      claims = body.then(
        () => {},
        () => {},
      )
      return body
    },
    close: () => handle.close(),
  }
}
