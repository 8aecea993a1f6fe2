import { readFile } from 'node:fs/promises'
import { afterEach, describe, expect, it } from 'vitest'
import {
  isLocalOwnerGone,
  LEASE_LOST,
  LEASE_UNAVAILABLE,
  localOwnerId,
  openStateStore,
  STALE_FENCE,
  type StateStore,
} from '../src/index.js'
import { Child, tempDataDir } from './helpers.js'

/** Lease TTL for these tests; every wait below is a multiple of it. Raise it on a slow machine. */
const TTL = Number(process.env.SKIPPR_STATE_TEST_TTL_MS ?? 200) * 2

const opened: StateStore[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()))
})

/** The parent's own view of the store the children use (the fixture's workspace is `test`). */
async function parentView(dataDir: string) {
  const store = await openStateStore({ dataDir, workspace: 'test' })
  opened.push(store)
  return store.pipeline('p')
}

/** Resolves once process `pid` is stopped (state `T` in /proc). */
async function stopped(pid: number): Promise<void> {
  const state = async () => (await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /s, '')[0]
  await expect.poll(state, { timeout: 10_000, interval: 5 }).toBe('T')
}

function holder(dataDir: string, owner: string, ttlMs: number, waitMs: number, skewMs = 0): Child {
  return new Child(['holder', dataDir, 'p', owner, String(ttlMs), String(waitMs), String(skewMs)])
}

/** Ten minutes: far more than any TTL here, so a wall-clock comparison would decide at once. */
const SKEW_MS = 600_000

describe('writer lease across processes', () => {
  it('takes over at once from a holder on this host whose process was killed, never from a live one', async () => {
    const dataDir = await tempDataDir()
    const p = await parentView(dataDir)
    const live = holder(dataDir, 'local', 60_000, 0)
    await live.next('acquired')
    await expect(
      p.acquireLease({ owner: localOwnerId(), waitMs: TTL, pollMs: 20, isHolderGone: isLocalOwnerGone }),
    ).rejects.toMatchObject({ code: LEASE_UNAVAILABLE })

    live.kill('SIGKILL')
    await live.exited
    const started = Date.now()
    const lease = await p.acquireLease({
      owner: localOwnerId(),
      waitMs: 10_000,
      isHolderGone: isLocalOwnerGone,
    })
    // The dead holder's TTL is a minute: only the gone-process check explains a quick takeover.
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(lease.token).toBe(2n)
  })

  it('makes a second process wait waitMs and fail with the lease message, then go once released', async () => {
    const dataDir = await tempDataDir()
    const p = await parentView(dataDir)
    const first = holder(dataDir, 'first', 60_000, 0)
    const { token } = await first.next('acquired')
    expect(token).toBe('1')

    const second = holder(dataDir, 'second', 60_000, TTL)
    const failed = await second.next('acquire-failed')
    expect(failed.code).toBe(LEASE_UNAVAILABLE)
    expect(failed.message).toMatch(/^pipeline writer lease unavailable: pipeline 'p' is held by 'first'/)
    expect(failed.waitedMs).toBeGreaterThanOrEqual(TTL)

    expect(await first.command('release')).toMatchObject({ ok: true })
    const next = await p.acquireLease({ owner: 'parent', waitMs: 0 })
    expect(next.token).toBe(2n)
  })

  it('lets a frozen holder be taken over after its TTL and refuses what it does when it wakes', async () => {
    const dataDir = await tempDataDir()
    const p = await parentView(dataDir)
    const old = holder(dataDir, 'old', TTL, 0)
    const oldToken = BigInt((await old.next('acquired')).token as string)
    expect(await old.command('write 1')).toMatchObject({ ok: true })

    // Its heartbeats keep the lease for longer than a TTL.
    await expect(p.acquireLease({ owner: 'parent', waitMs: 2 * TTL, pollMs: 20 })).rejects.toMatchObject({
      code: LEASE_UNAVAILABLE,
    })

    // It stops itself between two heartbeats (see `freeze` in the fixture).
    old.send('freeze')
    await stopped(old.process.pid!)
    const lease = await p.acquireLease({
      owner: 'parent',
      waitMs: 10 * TTL,
      pollMs: 20,
      heartbeatIntervalMs: 0,
    })
    expect(lease.token).toBe(oldToken + 1n)
    await p.saveResumeOffset({ owner: 'parent', seq: 2 }, { fence: lease.token })

    old.kill('SIGCONT')
    expect(await old.next('reply')).toMatchObject({ command: 'freeze', ok: true })
    expect(await old.next('lost')).toMatchObject({ code: LEASE_LOST })
    expect(await old.command('write 3')).toMatchObject({ ok: false, code: STALE_FENCE })
    expect(await old.command('heartbeat')).toMatchObject({ ok: false, code: LEASE_LOST })
    expect(await old.command('assert')).toMatchObject({ ok: false, code: LEASE_LOST })
    expect(await old.command('valid')).toMatchObject({ ok: true, value: false })
    expect(await p.getResumeOffset()).toEqual({ owner: 'parent', seq: 2 })
    await lease.assertHeld()
  })

  it('never takes over early from a live holder whose wall clock runs behind', async () => {
    const dataDir = await tempDataDir()
    const p = await parentView(dataDir)
    // Its heartbeats say they were written ten minutes ago.
    const behind = holder(dataDir, 'behind', TTL, 0, -SKEW_MS)
    await behind.next('acquired')
    expect((await p.getLeaseInfo())?.live).toBe(false)
    await expect(p.acquireLease({ owner: 'parent', waitMs: 3 * TTL, pollMs: 20 })).rejects.toMatchObject({
      code: LEASE_UNAVAILABLE,
    })
    expect(await behind.command('assert')).toMatchObject({ ok: true })
  })

  it('takes over after the TTL from a dead holder whose wall clock ran ahead', async () => {
    const dataDir = await tempDataDir()
    const p = await parentView(dataDir)
    // Its last heartbeat says it was written ten minutes from now.
    const ahead = holder(dataDir, 'ahead', TTL, 0, SKEW_MS)
    const { token } = await ahead.next('acquired')
    ahead.kill('SIGKILL')
    await ahead.exited
    const started = performance.now()
    const lease = await p.acquireLease({
      owner: 'parent',
      waitMs: 20 * TTL,
      pollMs: 20,
      heartbeatIntervalMs: 0,
    })
    const waited = performance.now() - started
    expect(lease.token).toBe(BigInt(token as string) + 1n)
    // Watched unchanged for a TTL, on the waiter's own clock: not sooner, and not ten minutes.
    expect(waited).toBeGreaterThanOrEqual(TTL)
    expect(waited).toBeLessThan(TTL + 5_000)
  })
})
