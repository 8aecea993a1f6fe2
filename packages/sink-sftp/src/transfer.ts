/**
 * A whole file's bytes over one open handle, with several requests in flight: one request at a
 * time would wait a round trip per piece, which caps throughput at piece size / latency.
 */
import type { Sftp } from './requests.js'
import { fstat, read, write } from './requests.js'

// ssh2 splits a larger piece into requests the server accepts (about 32 KiB on some servers,
// 255 KiB on OpenSSH), one after another; 16 × 64 KiB keeps 1 MiB on the way.
const PIECE_BYTES = 64 * 1024
const IN_FLIGHT = 16

interface Piece {
  /** Where in the file the piece starts. */
  readonly position: number
  readonly length: number
}

/** Writes the chunks in order from the file's start, as views of them (nothing is concatenated). */
export async function writeChunks(sftp: Sftp, handle: Buffer, chunks: readonly Uint8Array[]): Promise<void> {
  await eachInFlight(chunkPieces(chunks), (piece) => write(sftp, handle, piece.data, piece.position))
}

/** Every byte of the file. */
export async function readWhole(sftp: Sftp, handle: Buffer): Promise<Buffer> {
  const { size } = await fstat(sftp, handle)
  const into = Buffer.allocUnsafe(size)
  await eachInFlight(pieces(size), async ({ position, length }) => {
    // A server may answer with fewer bytes than asked for; ask again for the rest.
    for (let done = 0; done < length; ) {
      const bytes = await read(sftp, handle, into, position + done, length - done, position + done)
      if (bytes === 0) throw new Error(`the file ended after ${position + done} of its ${size} bytes`)
      done += bytes
    }
  })
  return into
}

function* pieces(size: number): Generator<Piece> {
  for (let position = 0; position < size; position += PIECE_BYTES)
    yield { position, length: Math.min(PIECE_BYTES, size - position) }
}

function* chunkPieces(chunks: readonly Uint8Array[]): Generator<Piece & { readonly data: Buffer }> {
  let offset = 0
  for (const chunk of chunks) {
    const view = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    for (const { position, length } of pieces(view.length))
      yield { position: offset + position, length, data: view.subarray(position, position + length) }
    offset += view.length
  }
}

/**
 * Runs `send` for every item, at most IN_FLIGHT at once. After a failure no new item starts, and
 * it waits for those in flight, so the caller may close the handle once this settles.
 */
async function eachInFlight<T>(items: Iterator<T>, send: (item: T) => Promise<void>): Promise<void> {
  let failed = false
  const worker = async () => {
    for (let next = items.next(); !failed && !next.done; next = items.next()) {
      try {
        await send(next.value)
      } catch (error) {
        failed = true
        throw error
      }
    }
  }
  const results = await Promise.allSettled(Array.from({ length: IN_FLIGHT }, worker))
  const failure = results.find((result) => result.status === 'rejected')
  if (failure) throw failure.reason
}
