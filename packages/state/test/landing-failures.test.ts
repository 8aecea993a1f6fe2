/** SHOW PIPELINE's failed landing attempts, on the real embedded store. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { openStateStore, type StateStore } from '../src/index.js'

let dir: string
let store: StateStore
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'skippr-failures-'))
  store = await openStateStore({ dataDir: dir })
})
afterEach(async () => {
  await store.close()
  await rm(dir, { recursive: true, force: true })
})

const batch = (seq: number, epoch = '00000000000000aa') => ({ epoch, seq: BigInt(seq) })

it('counts attempts per batch with the first and last time and the last error, across reopening', async () => {
  const failures = store.pipeline('p').landingFailures
  await failures.record(batch(3), 'connection refused', new Date(1_000))
  await failures.record(batch(3), 'relation "t" does not exist\nDETAIL: more', new Date(5_000))
  await failures.record(batch(4), 'timeout', new Date(6_000))
  await store.close()
  store = await openStateStore({ dataDir: dir })
  expect(await store.pipeline('p').landingFailures.read()).toEqual([
    {
      epoch: '00000000000000aa',
      seq: 3n,
      attempts: 2,
      firstFailedAt: new Date(1_000),
      lastFailedAt: new Date(5_000),
      lastError: 'relation "t" does not exist',
    },
    expect.objectContaining({ seq: 4n, attempts: 1, lastError: 'timeout' }),
  ])
})

it('forgets landed batches of the epoch, keeping later ones and other epochs', async () => {
  const failures = store.pipeline('p').landingFailures
  await failures.record(batch(3), 'a')
  await failures.record(batch(5), 'b')
  await failures.record(batch(1, '00000000000000bb'), 'c')
  await failures.forgetThrough(batch(4))
  expect((await failures.read()).map((f) => [f.epoch, f.seq])).toEqual([
    ['00000000000000aa', 5n],
    ['00000000000000bb', 1n],
  ])
  await store.pipeline('p').reset()
  expect(await failures.read()).toEqual([])
})
