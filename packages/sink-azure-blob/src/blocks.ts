/**
 * A large body as blocks of a block blob: staged one by one (uncommitted, invisible), then
 * committed in one Put Block List, so the blob appears whole. Blocks are views into the body's
 * chunks, never copies.
 */
import { randomBytes } from 'node:crypto'

/** Each block's slices of the chunks, in order: at most `size` bytes per block; none for an empty body. */
export function blocksOf(chunks: readonly Uint8Array[], size: number): Uint8Array[][] {
  const blocks: Uint8Array[][] = []
  let block: Uint8Array[] = []
  let room = size
  for (const chunk of chunks) {
    let offset = 0
    while (offset < chunk.length) {
      const slice = chunk.subarray(offset, offset + room)
      block.push(slice)
      offset += slice.length
      room -= slice.length
      if (room === 0) {
        blocks.push(block)
        block = []
        room = size
      }
    }
  }
  if (block.length > 0) blocks.push(block)
  return blocks
}

/**
 * IDs for `count` blocks of one upload: base64 of equal-length text (the service requires one
 * length per blob), with a random part, so two writers staging at the same blob never overwrite
 * each other's blocks.
 */
export function blockIds(count: number): string[] {
  const upload = randomBytes(8).toString('hex')
  return Array.from({ length: count }, (_, index) =>
    Buffer.from(`${upload}-${index.toString().padStart(6, '0')}`).toString('base64'),
  )
}
