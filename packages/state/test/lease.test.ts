import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  LEASE_LOST,
  LEASE_UNAVAILABLE,
  type LeaseWatch,
  LmdbBackend,
  openStateStore,
  type PipelineState,
  type PutCondition,
  type PutResult,
  STALE_FENCE,
  StateStore,
} from '../src/index.js'
import type { JsonValue } from '../src/json.js'
import { DelegatingBackend } from './delegating-backend.js'
import { tempDataDir } from './helpers.js'

/** Lease TTL for these tests; every wait below is a multiple of it. Raise it on a slow machine. */
const TTL = Number(process.env.SKIPPR_STATE_TEST_TTL_MS ?? 200)

const opened: StateStore[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()))
})

async function openStore(dataDir?: string): Promise<StateStore> {
  const store = await openStateStore({ dataDir: dataDir ?? (await tempDataDir()) })
  opened.push(store)
  return store
}

async function pipeline(): Promise<PipelineState> {
  return (await openStore()).pipeline('p')
}

describe('writer lease', () => {
  it('hands out strictly increasing fencing tokens', async () => {
    const p = await pipeline()
    const tokens: bigint[] = []
    for (let i = 0; i < 5; i++) {
      const lease = await p.acquireLease({ owner: `w${i}`, heartbeatIntervalMs: 0 })
      tokens.push(lease.token)
      await lease.release()
    }
    expect(tokens).toEqual([1n, 2n, 3n, 4n, 5n])
  })

  it('makes a second writer wait about waitMs, then fail naming the holder', async () => {
    const p = await pipeline()
    const holder = await p.acquireLease({ owner: 'host-a:123', ttlMs: 60_000 })
    const started = Date.now()
    const second = p.acquireLease({ owner: 'host-b:456', waitMs: TTL, pollMs: 20 })
    await expect(second).rejects.toMatchObject({
      code: LEASE_UNAVAILABLE,
      message: expect.stringMatching(
        /^pipeline writer lease unavailable: pipeline 'p' is held by 'host-a:123'/,
      ),
      holder: { owner: 'host-a:123', token: holder.token },
    })
    expect(Date.now() - started).toBeGreaterThanOrEqual(TTL)
    expect(Date.now() - started).toBeLessThan(TTL + 2_000)
  })

  it("ends a wait when its signal aborts, with the signal's reason, and takes nothing", async () => {
    const p = await pipeline()
    const holder = await p.acquireLease({ owner: 'a', ttlMs: 60_000 })
    const stop = new AbortController()
    const waiting = p.acquireLease({ owner: 'b', waitMs: 60_000, pollMs: 10, signal: stop.signal })
    await sleep(50)
    stop.abort('SIGTERM')
    await expect(waiting).rejects.toBe('SIGTERM')
    expect(await p.getLeaseInfo()).toMatchObject({ owner: 'a', token: holder.token })
    await expect(p.acquireLease({ owner: 'c', signal: stop.signal })).rejects.toBe('SIGTERM')
  })

  it('gives a waiting writer the lease as soon as the holder releases it', async () => {
    const p = await pipeline()
    const holder = await p.acquireLease({ owner: 'a', ttlMs: 60_000 })
    const started = Date.now()
    const waiting = p.acquireLease({ owner: 'b', waitMs: 10_000, pollMs: 10 })
    await sleep(TTL / 2)
    await holder.release()
    const next = await waiting
    expect(next.token).toBe(holder.token + 1n)
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(await p.getLeaseInfo()).toMatchObject({
      owner: 'b',
      token: next.token,
      live: true,
      released: false,
    })
  })

  it('keeps a heartbeating lease beyond its TTL', async () => {
    const p = await pipeline()
    const holder = await p.acquireLease({ owner: 'a', ttlMs: TTL, heartbeatIntervalMs: 0 })
    const contender = p.acquireLease({ owner: 'b', waitMs: 3 * TTL, pollMs: 10 })
    const refused = expect(contender).rejects.toMatchObject({ code: LEASE_UNAVAILABLE })
    for (let i = 0; i < 9; i++) {
      await sleep(TTL / 3)
      await holder.heartbeat()
    }
    await refused
    expect(holder.isValid()).toBe(true)
    await holder.assertHeld()
  })

  it('heartbeats by itself by default', async () => {
    const p = await pipeline()
    // A TTL that a loaded machine's stalls (a heartbeat's write taking a few hundred ms) do not lapse.
    const ttlMs = 5 * TTL
    const holder = await p.acquireLease({ owner: 'a', ttlMs })
    await expect(p.acquireLease({ owner: 'b', waitMs: 3 * ttlMs, pollMs: 10 })).rejects.toMatchObject({
      code: LEASE_UNAVAILABLE,
    })
    expect(holder.isValid()).toBe(true)
  })

  it('lets a lease with no heartbeat for its TTL be taken over, and fences out the old holder', async () => {
    const p = await pipeline()
    // The TTL runs from the old holder's acquisition: the write in between may take a while on a busy disk.
    const started = Date.now()
    const old = await p.acquireLease({ owner: 'old', ttlMs: TTL, heartbeatIntervalMs: 0 })
    await p.saveResumeOffset({ line: 1 }, { fence: old.token })
    const next = await p.acquireLease({ owner: 'new', waitMs: 10 * TTL, pollMs: 10, heartbeatIntervalMs: 0 })
    expect(Date.now() - started).toBeGreaterThanOrEqual(TTL - 50)
    expect(next.token).toBe(old.token + 1n)
    await p.saveResumeOffset({ line: 2 }, { fence: next.token })

    expect(old.isValid()).toBe(false)
    await expect(old.heartbeat()).rejects.toMatchObject({
      code: LEASE_LOST,
      message: expect.stringContaining("was taken over by 'new'"),
    })
    await expect(old.assertHeld()).rejects.toMatchObject({ code: LEASE_LOST })
    await expect(p.saveResumeOffset({ line: 99 }, { fence: old.token })).rejects.toMatchObject({
      code: STALE_FENCE,
    })
    await expect(p.saveSchema('ns', {}, { fence: old.token })).rejects.toMatchObject({ code: STALE_FENCE })
    await expect(p.setLastRun(new Date(), { fence: old.token })).rejects.toMatchObject({ code: STALE_FENCE })
    await expect(p.checkFence(old.token)).rejects.toMatchObject({ code: STALE_FENCE })
    await p.checkFence(next.token)
    expect(await p.getResumeOffset()).toEqual({ line: 2 })
    expect(await p.listSchemas()).toEqual([])
    // Releasing a lost lease must not free the new holder's lease.
    await old.release()
    await next.assertHeld()
  })

  it('tells the holder through onLost when its automatic heartbeat finds the lease taken', async () => {
    const store = await openStore()
    const p = store.pipeline('p')
    const onLost = vi.fn()
    const holder = await p.acquireLease({ owner: 'a', ttlMs: TTL, heartbeatIntervalMs: TTL / 4, onLost })
    // Another writer forces the lease as if the holder had been frozen past its TTL.
    const record = (await store.backend.get('default/leases/p'))?.value as Record<string, JsonValue>
    await store.backend.put('default/leases/p', { ...record, owner: 'intruder', token: '7' })
    await vi.waitFor(() => expect(onLost).toHaveBeenCalledTimes(1), { timeout: 5 * TTL })
    expect(onLost.mock.calls[0]?.[0]).toMatchObject({ code: LEASE_LOST })
    expect(holder.isValid()).toBe(false)
  })

  it('refuses everything a released lease tries, and lets the next writer in at once', async () => {
    const p = await pipeline()
    const lease = await p.acquireLease({ owner: 'a', ttlMs: 60_000 })
    await lease.release()
    await lease.release()
    expect(lease.isValid()).toBe(false)
    await expect(lease.heartbeat()).rejects.toMatchObject({ code: LEASE_LOST })
    await expect(p.saveResumeOffset(1, { fence: lease.token })).rejects.toMatchObject({ code: STALE_FENCE })
    expect(await p.getLeaseInfo()).toMatchObject({ owner: 'a', released: true, live: false })
    const next = await p.acquireLease({ owner: 'b', waitMs: 0 })
    expect(next.token).toBe(lease.token + 1n)
  })

  it('refuses a stale write that passed the lease check but lands after a takeover', async () => {
    const backend = LmdbBackend.open(await tempDataDir())
    const gated = new GatedBackend(backend)
    const stale = new StateStore(gated).pipeline('p')
    const fresh = new StateStore(backend).pipeline('p')
    opened.push(new StateStore(backend))
    const old = await stale.acquireLease({ owner: 'old', ttlMs: TTL, heartbeatIntervalMs: 0 })

    // The old holder's write checks the lease (still its own), then stalls before its put...
    const paused = gated.pauseNextPut('/resume')
    const write = stale.saveResumeOffset('stale', { fence: old.token })
    await paused.reached
    // ...while the lease expires and a new writer takes over.
    const next = await fresh.acquireLease({
      owner: 'new',
      waitMs: 10 * TTL,
      pollMs: 10,
      heartbeatIntervalMs: 0,
    })
    paused.resume()
    await expect(write).rejects.toMatchObject({ code: STALE_FENCE })
    expect(await fresh.getResumeOffset()).toBeUndefined()
    await fresh.saveResumeOffset('fresh', { fence: next.token })
    expect(await fresh.getResumeOffset()).toBe('fresh')
  })

  it('declares the lease lost, before a waiter may take it, while a heartbeat hangs', async () => {
    const backend = LmdbBackend.open(await tempDataDir())
    const gated = new GatedBackend(backend)
    const store = new StateStore(gated)
    opened.push(store)
    const onLost = vi.fn()
    const holder = await store
      .pipeline('p')
      .acquireLease({ owner: 'a', ttlMs: 4 * TTL, heartbeatIntervalMs: TTL / 2, onLost })
    const hung = gated.pauseNextPut('/leases/p')
    await hung.reached
    const since = performance.now()
    await vi.waitFor(() => expect(onLost).toHaveBeenCalledTimes(1), { timeout: 20 * TTL, interval: 5 })
    // Lost at 80 % of the TTL after the last heartbeat was sent: before any waiter's TTL is up.
    expect(performance.now() - since).toBeLessThan(4 * TTL)
    expect(onLost.mock.calls[0]?.[0]).toMatchObject({ code: LEASE_LOST })
    expect(holder.isValid()).toBe(false)
    hung.resume()
  })

  it('takes over, across attempts that do not wait, a lease it has seen unchanged for the TTL', async () => {
    const p = await pipeline()
    const dead = await p.acquireLease({ owner: 'dead', ttlMs: TTL, heartbeatIntervalMs: 0 })
    const watch: LeaseWatch = {}
    const attempt = (w?: LeaseWatch) =>
      p.acquireLease({ owner: 'fleet', waitMs: 0, heartbeatIntervalMs: 0, ...(w && { watch: w }) })
    await expect(attempt(watch)).rejects.toMatchObject({ code: LEASE_UNAVAILABLE })
    await sleep(TTL + 20)
    // A first look, however late, starts the count again: only the watch remembers.
    await expect(attempt()).rejects.toMatchObject({ code: LEASE_UNAVAILABLE })
    const taken = await attempt(watch)
    expect(taken.token).toBe(dead.token + 1n)
    expect(watch.seen).toBeUndefined()
  })

  it('tells the holder of each renewal', async () => {
    const p = await pipeline()
    const renewed = vi.fn()
    const lease = await p.acquireLease({ owner: 'a', ttlMs: TTL, heartbeatIntervalMs: 0, onRenewed: renewed })
    await lease.heartbeat()
    await lease.heartbeat()
    expect(renewed).toHaveBeenCalledTimes(2)
    expect(renewed.mock.calls[0]?.[0]).toBe(lease)
  })

  it('stops heartbeat timers when the store closes', async () => {
    const store = await openStateStore({ dataDir: await tempDataDir() })
    const onLost = vi.fn()
    await store.pipeline('p').acquireLease({ owner: 'a', ttlMs: TTL, heartbeatIntervalMs: TTL / 4, onLost })
    await store.close()
    await sleep(3 * TTL)
    expect(onLost).not.toHaveBeenCalled()
  })
})

/** A real backend whose next put on a key can be held back, to place a takeover inside a write. */
class GatedBackend extends DelegatingBackend {
  private gate: { suffix: string; reached: () => void; opened: Promise<void> } | undefined

  pauseNextPut(suffix: string): { reached: Promise<void>; resume: () => void } {
    let reached!: () => void
    let resume!: () => void
    const reachedPromise = new Promise<void>((resolve) => {
      reached = resolve
    })
    this.gate = { suffix, reached, opened: new Promise((resolve) => (resume = resolve)) }
    return { reached: reachedPromise, resume }
  }

  override async put(key: string, value: JsonValue, condition?: PutCondition): Promise<PutResult> {
    const gate = this.gate
    if (gate !== undefined && key.endsWith(gate.suffix)) {
      this.gate = undefined
      gate.reached()
      await gate.opened
    }
    return this.inner.put(key, value, condition)
  }
}
