import { afterEach, describe, expect, it, vi } from 'vitest'
import { BatchBuffer, type BufferChunk } from '../src/buffer.js'
import type { BatchInput } from '../src/types.js'

const chunk = (body: string, offset: number, extra: Partial<BufferChunk> = {}): BufferChunk => ({
  namespace: 'rentals',
  format: 'csv',
  schemaVersion: 1,
  rows: body.split('\n').length - 1,
  body: Buffer.from(body),
  offset,
  ...extra,
})

const readable = (batch: BatchInput) => ({
  offset: batch.offset,
  parts: batch.parts.map((p) => ({ ...p, body: Buffer.concat([p.body].flat()).toString() })),
})

function recordingBuffer(thresholdBytes: number, thresholdSeconds = 60) {
  const committed: ReturnType<typeof readable>[] = []
  const buffer = new BatchBuffer({
    thresholdBytes,
    thresholdSeconds,
    commit: async (batch) => {
      committed.push(readable(batch))
    },
  })
  return { buffer, committed }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('BatchBuffer', () => {
  it('flushes when the byte threshold is reached', async () => {
    const { buffer, committed } = recordingBuffer(10)
    await buffer.add(chunk('1,a\n', 1))
    await buffer.add(chunk('2,bb\n', 2))
    expect(committed).toEqual([])
    expect(buffer.bytes).toBe(9)
    await buffer.add(chunk('3,c\n', 3))
    expect(buffer.bytes).toBe(0)
    await buffer.flush()
    expect(committed).toEqual([
      {
        offset: 3,
        parts: [{ namespace: 'rentals', format: 'csv', schemaVersion: 1, rows: 3, body: '1,a\n2,bb\n3,c\n' }],
      },
    ])
  })

  it('commits chunks added together in one batch, though the threshold falls between them', async () => {
    const { buffer, committed } = recordingBuffer(4)
    const setAside = chunk('{"record":"x"}\n', 1, { namespace: '_dl_p', format: 'jsonl', schemaVersion: 0 })
    await buffer.add([chunk('1,a\n2,b\n', 1), setAside])
    await buffer.flush()
    expect(committed.map((b) => [b.offset, b.parts.map((p) => p.namespace)])).toEqual([
      [1, ['rentals', '_dl_p']],
    ])
  })

  it('lets the next batch fill while one commits, and holds the source when a second flush is due', async () => {
    const gates: Array<() => void> = []
    const committed: unknown[] = []
    const buffer = new BatchBuffer({
      thresholdBytes: 4,
      thresholdSeconds: 60,
      commit: async (batch) => {
        await new Promise<void>((release) => gates.push(release))
        committed.push(batch.offset)
      },
    })
    await buffer.add(chunk('1,a\n', 1)) // flush 1 starts; nothing before it to wait for
    let second = false
    const adding = buffer.add(chunk('2,b\n', 2)).then(() => {
      second = true
    })
    await new Promise((r) => setTimeout(r, 20))
    expect(second).toBe(false) // flush 2 is due while flush 1 is still committing
    gates.shift()!()
    await adding
    expect(committed).toEqual([1])
    await new Promise((r) => setTimeout(r, 5))
    gates.shift()!()
    await buffer.flush()
    expect(committed).toEqual([1, 2])
  })

  it('flushes when the oldest chunk reaches the time threshold, however small the batch', async () => {
    vi.useFakeTimers()
    const { buffer, committed } = recordingBuffer(1_000_000, 60)
    await buffer.add(chunk('1,a\n', 1))
    await vi.advanceTimersByTimeAsync(30_000)
    await buffer.add(chunk('2,b\n', 2))
    await vi.advanceTimersByTimeAsync(29_999)
    expect(committed).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(committed).toEqual([
      { offset: 2, parts: [expect.objectContaining({ rows: 2, body: '1,a\n2,b\n' })] },
    ])
    // The clock starts again with the next chunk, not at the last flush.
    await vi.advanceTimersByTimeAsync(120_000)
    expect(committed).toHaveLength(1)
    await buffer.add(chunk('3,c\n', 3))
    await vi.advanceTimersByTimeAsync(60_000)
    expect(committed.map((b) => b.offset)).toEqual([2, 3])
  })

  it('joins chunks of one namespace, format and schema version into one part, in arrival order', async () => {
    const { buffer, committed } = recordingBuffer(1_000_000)
    await buffer.add(chunk('1,a\n', 1))
    await buffer.add(chunk('{"id":1}\n', 2, { namespace: 'stations', format: 'jsonl' }))
    await buffer.add(chunk('2,b\n', 3))
    await buffer.add(chunk('3,c,new\n', 4, { schemaVersion: 2 }))
    await buffer.add(chunk('{"id":2}\n', 5, { namespace: 'stations', format: 'jsonl' }))
    await buffer.flush()
    expect(committed).toEqual([
      {
        offset: 5,
        parts: [
          { namespace: 'rentals', format: 'csv', schemaVersion: 1, rows: 2, body: '1,a\n2,b\n' },
          { namespace: 'stations', format: 'jsonl', schemaVersion: 1, rows: 2, body: '{"id":1}\n{"id":2}\n' },
          { namespace: 'rentals', format: 'csv', schemaVersion: 2, rows: 1, body: '3,c,new\n' },
        ],
      },
    ])
  })

  it('commits an offset-only chunk as a batch without parts; flushes nothing when empty', async () => {
    const { buffer, committed } = recordingBuffer(1_000_000)
    await buffer.flush()
    expect(committed).toEqual([])
    await buffer.add(chunk('', 9, { rows: 0 }))
    await buffer.close()
    expect(committed).toEqual([{ offset: 9, parts: [] }])
    await expect(buffer.add(chunk('1,a\n', 10))).rejects.toMatchObject({ code: 'WAL_BATCH_INVALID' })
  })

  it('keeps commits in order when a timer flush is still running', async () => {
    vi.useFakeTimers()
    const order: unknown[] = []
    let release: () => void = () => {}
    const gate = new Promise<void>((r) => {
      release = r
    })
    const buffer = new BatchBuffer({
      thresholdBytes: 8,
      thresholdSeconds: 1,
      commit: async (batch) => {
        if (batch.offset === 1) await gate
        order.push(batch.offset)
      },
    })
    await buffer.add(chunk('1,a\n', 1))
    await vi.advanceTimersByTimeAsync(1000) // timer flush of offset 1 starts and blocks
    const second = buffer.add(chunk('2,bbbbbb\n', 2)) // reaches the byte threshold
    await vi.advanceTimersByTimeAsync(10)
    expect(order).toEqual([])
    release()
    await second
    expect(order).toEqual([1, 2])
  })

  it('breaks for good after a failed commit, so no later batch can skip the lost rows', async () => {
    const commit = vi.fn(async () => {
      throw Object.assign(new Error('disk full'), { code: 'SF_DISK_FULL' })
    })
    const buffer = new BatchBuffer({ thresholdBytes: 4, thresholdSeconds: 60, commit })
    await buffer.add(chunk('1,a\n', 1)) // its commit fails in the background
    await expect(buffer.add(chunk('2,b\n', 2))).rejects.toMatchObject({ code: 'SF_DISK_FULL' })
    await expect(buffer.add(chunk('3,c\n', 3))).rejects.toMatchObject({ code: 'SF_DISK_FULL' })
    await expect(buffer.flush()).rejects.toMatchObject({ code: 'SF_DISK_FULL' })
    expect(commit).toHaveBeenCalledTimes(1)
  })

  it('refuses a chunk that does not end with whole rows', async () => {
    const { buffer } = recordingBuffer(1_000_000)
    await expect(buffer.add(chunk('1,a\n2,b', 1))).rejects.toMatchObject({
      code: 'WAL_BATCH_INVALID',
      message: expect.stringContaining('newline'),
    })
  })
})
