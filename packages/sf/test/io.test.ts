import { describe, expect, it } from 'vitest'
import { IOV_MAX, type SlotFile, writevFully } from '../src/io.js'

/**
 * A file in memory whose writev writes at most the next number of `limits` bytes (then all it is given),
 * refuses more than IOV_MAX buffers as the system call does, and records each call's buffer count.
 */
function memoryFile(limits: number[] = []) {
  const data = Buffer.alloc(1 << 16)
  const calls: number[] = []
  const file: Pick<SlotFile, 'writev'> = {
    async writev(buffers, position) {
      if (buffers.length > IOV_MAX) throw Object.assign(new Error('EINVAL'), { code: 'EINVAL' })
      calls.push(buffers.length)
      let left = limits.shift() ?? Number.POSITIVE_INFINITY
      let at = position
      for (const b of buffers) {
        const n = Math.min(b.length, left)
        data.set(b.subarray(0, n), at)
        at += n
        left -= n
      }
      return at - position
    },
  }
  return { file: file as SlotFile, data, calls }
}

const bytes = (n: number, from: number): Buffer => Buffer.from(Array.from({ length: n }, (_, i) => from + i))

describe('writevFully', () => {
  it('continues after short writes that end inside a buffer, at a boundary, or after empty buffers', async () => {
    const buffers = [bytes(5, 1), Buffer.alloc(0), bytes(3, 10), bytes(4, 20), Buffer.alloc(0)]
    const { file, data, calls } = memoryFile([2, 3, 1, 1])
    await writevFully(file, buffers, 7)
    expect(data.subarray(7, 7 + 12)).toEqual(Buffer.concat(buffers))
    expect(data[6]).toBe(0)
    expect(data[19]).toBe(0)
    // Each call starts with the first unwritten byte: after 2 bytes, the rest of the first buffer (that
    // call ends at a boundary, and the empty buffer after it is skipped), then inside the third twice.
    expect(calls).toEqual([5, 5, 3, 3, 3])
  })

  it('passes at most IOV_MAX buffers per call', async () => {
    const buffers = Array.from({ length: 2 * IOV_MAX + 3 }, (_, i) => Buffer.of(i & 0xff))
    const { file, data, calls } = memoryFile()
    await writevFully(file, buffers, 0)
    expect(calls).toEqual([IOV_MAX, IOV_MAX, 3])
    expect(data.subarray(0, buffers.length)).toEqual(Buffer.concat(buffers))
  })

  it('writes nothing for empty buffers only, and fails when a write makes no progress', async () => {
    const empty = memoryFile()
    await writevFully(empty.file, [Buffer.alloc(0)], 0)
    expect(empty.calls).toEqual([])
    const stuck = memoryFile([0])
    await expect(writevFully(stuck.file, [bytes(3, 1)], 100)).rejects.toThrow(
      /made no progress at file position 100/,
    )
  })
})
