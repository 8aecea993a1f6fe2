/** SHOW STATS's committed/landed counters, on the real embedded store. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openStateStore, type StateStore } from '../src/index.js'

let dir: string
let store: StateStore
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'skippr-counters-'))
  store = await openStateStore({ dataDir: dir })
})
afterEach(async () => {
  await store.close()
  await rm(dir, { recursive: true, force: true })
})

const id = (seq: number, epoch = '00000000000000aa') => ({ pipeline: 'p', epoch, seq: BigInt(seq) })
const part = (namespace: string, rows: number, bytes: number) => ({
  namespace,
  rows,
  body: new Uint8Array(bytes),
})
// A body committed as chunks counts all its bytes.
const chunked = (namespace: string, rows: number, bytes: number) => ({
  namespace,
  rows,
  body: [new Uint8Array(bytes - 1), new Uint8Array(1)],
})

describe('PipelineCounters', () => {
  it('adds each batch once per kind, per namespace, across restarts and epochs', async () => {
    const counters = store.pipeline('p').counters
    await counters.recordCommitted(id(1), [part('a', 2, 20), part('b', 1, 5)])
    await counters.recordCommitted(id(2), [chunked('a', 3, 30)])
    await counters.recordLanded(id(1), [
      part('a', 2, 20),
      part('b', 1, 5),
      { ...part('a', 0, 0), deadletters: 3 },
    ])
    // A restart lands batch 1 again and re-reports commit 2: no change.
    const again = store.pipeline('p').counters
    await again.recordLanded(id(1), [part('a', 2, 20), part('b', 1, 5)])
    await again.recordCommitted(id(2), [part('a', 3, 30)])
    // After a reset of the WAL, seqs start over in a new epoch.
    await again.recordCommitted(id(1, '00000000000000bb'), [part('a', 1, 7)])
    expect(Object.fromEntries(await counters.read())).toEqual({
      a: { committedRows: 6, committedBytes: 57, landedRows: 2, landedBytes: 20, deadletterRows: 3 },
      b: { committedRows: 1, committedBytes: 5, landedRows: 1, landedBytes: 5, deadletterRows: 0 },
    })
  })

  it('is cleared by reset() and deleted with the rest of the pipeline by DROP', async () => {
    const counters = store.pipeline('p').counters
    await counters.recordCommitted(id(1), [part('a', 1, 1)])
    await store.pipeline('p').reset()
    expect((await counters.read()).size).toBe(0)
    await counters.recordCommitted(id(1), [part('a', 1, 1)])
    expect((await counters.read()).size).toBe(1)
    await store.pipeline('p').drop()
    expect((await counters.read()).size).toBe(0)
    // Another pipeline's counters are its own.
    await store.pipeline('p2').counters.recordCommitted(id(1), [part('a', 4, 4)])
    expect((await counters.read()).size).toBe(0)
  })
})
