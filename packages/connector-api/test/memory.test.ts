import { describe, expect, it } from 'vitest'
import { MemorySink, MemorySource } from '../src/memory.js'

const schema = { namespace: 'n', fields: [{ name: 'a', type: 'int' as const }] }
const part = {
  namespace: 'n',
  schemaVersion: 1,
  format: 'jsonl' as const,
  rows: 2,
  body: new Uint8Array(),
  schema,
}
const id = { pipeline: 'p', epoch: 'e1', seq: 1n }

describe('MemorySink', () => {
  it('lands a batch once and recognises the retry', async () => {
    const sink = new MemorySink()
    expect(await sink.write({ id, fence: 1n, parts: [part] })).toEqual({ status: 'landed', rows: 2 })
    expect(await sink.write({ id, fence: 1n, parts: [part] })).toEqual({ status: 'already-landed' })
    expect(sink.rowCount()).toBe(2)
  })
  it('treats a new epoch as a new batch', async () => {
    const sink = new MemorySink()
    await sink.write({ id, fence: 1n, parts: [part] })
    await sink.write({ id: { ...id, epoch: 'e2' }, fence: 1n, parts: [part] })
    expect(sink.rowCount('n')).toBe(4)
  })
  it('refuses a writer whose fencing token is older than one it has seen', async () => {
    const sink = new MemorySink()
    await sink.write({ id, fence: 5n, parts: [part] })
    const outcome = await sink.write({ id: { ...id, seq: 2n }, fence: 4n, parts: [part] })
    expect(outcome.status).toBe('fatal')
  })
})

describe('MemorySource', () => {
  it('resumes after the offset it handed out', async () => {
    const source = new MemorySource([schema], [part, part, part])
    const signal = new AbortController().signal
    const offsets: unknown[] = []
    for await (const chunk of source.read(1, { signal, follow: false })) offsets.push(chunk.offset)
    expect(offsets).toEqual([2, 3])
  })
})
