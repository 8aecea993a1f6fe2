/** The counters as a sync writes them: many batches in one write, late by at most an interval. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { CountersBuffer, LmdbBackend, type PutCondition, type PutResult, StateStore } from '../src/index.js'
import type { JsonValue } from '../src/json.js'
import { DelegatingBackend } from './delegating-backend.js'

/** The real embedded backend, counting puts and failing them on demand. */
class CountingBackend extends DelegatingBackend {
  puts = 0
  failing = false
  override async put(key: string, value: JsonValue, condition?: PutCondition): Promise<PutResult> {
    if (this.failing) throw new Error('store unavailable')
    this.puts++
    return this.inner.put(key, value, condition)
  }
}

let dir: string
let backend: CountingBackend
let store: StateStore
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'skippr-counters-buffer-'))
  backend = new CountingBackend(LmdbBackend.open(dir))
  store = new StateStore(backend)
})
afterEach(async () => {
  await store.close()
  await rm(dir, { recursive: true, force: true })
})

const id = (seq: number) => ({ epoch: '00000000000000aa', seq: BigInt(seq) })
const part = (rows: number) => ({ namespace: 'a', rows, body: new Uint8Array(rows * 10) })

describe('CountersBuffer', () => {
  it('writes many batches in one write, within the interval, each counted once', async () => {
    const counters = store.pipeline('p').counters
    const buffer = new CountersBuffer(counters, { intervalMs: 50, onError: () => {} })
    for (let seq = 1; seq <= 20; seq++) {
      await buffer.recordCommitted(id(seq), [part(seq)])
      if (seq % 2 === 0) await buffer.recordLanded(id(seq - 1), [part(seq - 1)])
    }
    // Late, never ahead: nothing is written before the interval.
    expect(backend.puts).toBe(0)
    expect((await counters.read()).size).toBe(0)
    await vi.waitFor(
      async () =>
        expect((await counters.read()).get('a')).toMatchObject({ committedRows: 210, landedRows: 100 }),
      { timeout: 2_000, interval: 5 },
    )
    expect(backend.puts).toBe(1)
    // A batch counted before is left out, as when counted alone.
    await buffer.recordCommitted(id(3), [part(3)])
    await buffer.close()
    expect((await counters.read()).get('a')).toMatchObject({ committedRows: 210 })
  })

  it('writes what is left when it closes, and keeps what a failed write held for the next', async () => {
    const counters = store.pipeline('p').counters
    const onError = vi.fn()
    const buffer = new CountersBuffer(counters, { intervalMs: 10, onError })
    backend.failing = true
    await buffer.recordLanded(id(1), [part(4)])
    await vi.waitFor(() => expect(onError).toHaveBeenCalled(), { timeout: 2_000, interval: 5 })
    backend.failing = false
    await buffer.recordLanded(id(2), [part(6)])
    await buffer.close()
    expect((await counters.read()).get('a')).toMatchObject({ landedRows: 10 })
    await sleep(30)
    expect(backend.puts).toBe(1)
  })
})
