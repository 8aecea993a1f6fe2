import type { SourceChunk } from '@skippr/connector-api'
import { describe, expect, it } from 'vitest'
import {
  decodePayload,
  PushAbandonedError,
  type PushOffset,
  PushQueue,
  PushQueueFullError,
} from '../src/index.js'

const decoded = (text: string) => decodePayload(new TextEncoder().encode(text), 'jsonl')

/** A queue being read, and the chunks it yielded so far. */
function reading(maxPendingBytes = 1 << 20, from?: PushOffset<string[]>) {
  const queue = new PushQueue<string[]>({ maxPendingBytes })
  const stop = new AbortController()
  const chunks: SourceChunk[] = []
  const iterator = queue.chunks(from, stop.signal)
  const done = (async () => {
    for await (const chunk of iterator) chunks.push(chunk)
  })()
  return { queue, chunks, stop, done }
}

const settled = (promise: Promise<unknown>) =>
  Promise.race([
    promise.then(
      () => 'resolved',
      () => 'rejected',
    ),
    new Promise((r) => setImmediate(() => r('pending'))),
  ])

describe('PushQueue', () => {
  it('resolves a push once a commit holding its seq happened, not before', async () => {
    const { queue, chunks } = reading()
    await new Promise((r) => setImmediate(r))
    const first = queue.push({ namespace: 'e', decoded: decoded('{"a":1}\n'), state: ['k1'] })
    const second = queue.push({
      namespace: 'e',
      decoded: decoded('{"a":2}\n{"b":"x"}\n'),
      state: ['k1', 'k2'],
    })
    await new Promise((r) => setImmediate(r))
    expect(chunks.map((c) => [c.rows, c.offset])).toEqual([
      [1, { seq: 1, state: ['k1'] }],
      [2, { seq: 2, state: ['k1', 'k2'] }],
    ])
    expect(chunks[0]?.schema?.fields).toEqual([{ name: 'a', type: 'int' }])
    expect(chunks[1]?.schema?.fields).toEqual([
      { name: 'a', type: 'int' },
      { name: 'b', type: 'string' },
    ])
    expect(await settled(first)).toBe('pending')
    queue.committed(chunks[0]!.offset)
    expect(await settled(first)).toBe('resolved')
    expect(await settled(second)).toBe('pending')
    queue.committed(chunks[1]!.offset)
    expect(await settled(second)).toBe('resolved')
    expect(queue.pendingBytes).toBe(0)
  })

  it('carries the schema only when it changed', async () => {
    const { queue, chunks } = reading()
    await new Promise((r) => setImmediate(r))
    void queue.push({ namespace: 'e', decoded: decoded('{"a":1}\n'), state: [] })
    void queue.push({ namespace: 'e', decoded: decoded('{"a":2}\n'), state: [] })
    void queue.push({ namespace: 'e', decoded: decoded('{"a":2.5}\n'), state: [] })
    await new Promise((r) => setImmediate(r))
    expect(chunks.map((c) => c.schema?.fields[0]?.type)).toEqual(['int', undefined, 'double'])
  })

  it('counts seq on from the resumed offset', async () => {
    const { queue, chunks } = reading(1 << 20, { seq: 41, state: [] })
    await new Promise((r) => setImmediate(r))
    void queue.push({ namespace: 'e', decoded: decoded('{"a":1}\n'), state: [] })
    await new Promise((r) => setImmediate(r))
    expect(chunks[0]?.offset).toEqual({ seq: 42, state: [] })
  })

  it('refuses a push beyond the pending cap until commits free room', async () => {
    const { queue, chunks } = reading(10)
    await new Promise((r) => setImmediate(r))
    void queue.push({ namespace: 'e', decoded: decoded('{"a":1}\n'), state: [] })
    expect(() => queue.push({ namespace: 'e', decoded: decoded('{"a":2}\n'), state: [] })).toThrow(
      PushQueueFullError,
    )
    const room = queue.room(8)
    expect(await settled(room)).toBe('pending')
    await new Promise((r) => setImmediate(r))
    queue.committed(chunks[0]!.offset)
    expect(await settled(room)).toBe('resolved')
    expect(queue.hasRoom(8)).toBe(true)
  })

  it('abandons pushes not committed when the run stops or fails', async () => {
    const { queue, chunks, stop, done } = reading()
    await new Promise((r) => setImmediate(r))
    const taken = queue.push({ namespace: 'e', decoded: decoded('{"a":1}\n'), state: [] })
    await new Promise((r) => setImmediate(r))
    expect(chunks).toHaveLength(1)
    stop.abort()
    await done
    expect(await settled(taken)).toBe('pending') // the runner's last commit may still hold it
    queue.close('failed', new Error('fsync failed'))
    await expect(taken).rejects.toMatchObject({ why: 'failed' })
    expect(() => queue.push({ namespace: 'e', decoded: decoded('{"a":1}\n'), state: [] })).toThrow(
      PushAbandonedError,
    )
  })

  it('a push of no rows waits for the pushes before it', async () => {
    const { queue, chunks } = reading()
    await new Promise((r) => setImmediate(r))
    expect(await settled(queue.push({ namespace: 'e', decoded: decoded(''), state: [] }))).toBe('resolved')
    void queue.push({ namespace: 'e', decoded: decoded('{"a":1}\n'), state: [] })
    const empty = queue.push({ namespace: 'e', decoded: decoded('\n'), state: [] })
    expect(await settled(empty)).toBe('pending')
    queue.committed(chunks[0]!.offset)
    expect(await settled(empty)).toBe('resolved')
  })
})
