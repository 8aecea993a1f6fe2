/**
 * Orphan adoption: slots left behind by dead senders are drained by another sender with
 * drain_orphans=on; slots that cannot be drained end with `.failed` and are skipped by later scans.
 */
import { readdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { DrainerEvent } from '../src/drainers.js'
import { Sender } from '../src/sender.js'
import { openSlot } from '../src/slot.js'
import { runFixture } from './support/child.js'
import { downPort, recordingReceiver, waitUntil } from './support/harness.js'
import { tmpSfDir } from './support/helpers.js'

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const records = (n: number): string[] => Array.from({ length: n }, (_, i) => `rec-${i + 1}`)

/** Leaves a slot with `n` unacked records and no live owner, the way a crashed sender would. */
async function orphan(sfDir: string, senderId: string, n: number, maxSegmentBytes?: number): Promise<void> {
  const slot = await openSlot({ sfDir, senderId, ...(maxSegmentBytes ? { maxSegmentBytes } : {}) })
  for (const r of records(n)) await slot.append(Buffer.from(r))
  await slot.close()
}

async function drainingSender(config: string) {
  const events: DrainerEvent[] = []
  const errors: Error[] = []
  const sender = await Sender.fromConfig(config, {
    onDrainerEvent: (e) => void events.push(e),
    onError: (e) => void errors.push(e),
  })
  cleanups.push(() => sender.close().catch(() => {}))
  return {
    sender,
    events,
    errors,
    of: (type: DrainerEvent['type']) =>
      events
        .filter((e) => e.type === type)
        .map((e) => e.senderId)
        .sort(),
  }
}

const segmentsOf = async (sfDir: string, id: string): Promise<string[]> =>
  (await readdir(path.join(sfDir, id))).filter((n) => n.endsWith('.sfa'))

describe('orphan drainers', () => {
  it('drains three slots left by SIGKILLed senders from a fourth sender', async () => {
    const sfDir = await tmpSfDir()
    const down = await downPort()
    cleanups.push(() => down.close())
    const children = ['o1', 'o2', 'o3'].map((id) =>
      runFixture('crash-sender.ts', [`127.0.0.1:${down.port}`, sfDir, id, '300']),
    )
    for (const child of children) {
      cleanups.push(() => child.kill())
      await child.printed('appended')
      await child.kill()
    }

    let slowFrames = true
    const rec = await recordingReceiver({
      // Slow enough that the drainers are seen running.
      onFrames: async ({ senderId, frames }) => {
        if (slowFrames) await new Promise((resolve) => setTimeout(resolve, 20))
        for (const f of frames)
          rec.got.push({ senderId, fsn: f.fsn, text: Buffer.from(f.payload).toString() })
        return undefined
      },
    })
    cleanups.push(() => rec.receiver.close())
    const d = await drainingSender(
      `ws::addr=${rec.addr};sf_dir=${sfDir};sender_id=main;drain_orphans=on;max_background_drainers=2;`,
    )
    let maxActive = 0
    await waitUntil(
      () => {
        maxActive = Math.max(maxActive, d.sender.counters().activeBackgroundDrainers)
        return d.sender.counters().totalBackgroundDrainersSucceeded === 3
      },
      20_000,
      'three drained orphans',
    )
    slowFrames = false
    expect(maxActive).toBe(2)
    await waitUntil(() => d.sender.counters().activeBackgroundDrainers === 0)
    for (const id of ['o1', 'o2', 'o3']) {
      expect(rec.of(id)).toEqual(records(300))
      expect(await segmentsOf(sfDir, id)).toEqual([])
    }
    expect(d.of('started')).toEqual(['o1', 'o2', 'o3'])
    expect(d.of('succeeded')).toEqual(['o1', 'o2', 'o3'])
    expect(d.events.some((e) => e.type === 'progress' && e.senderId === 'o1' && e.ackedFsn === 300n)).toBe(
      true,
    )
    expect(d.sender.counters().totalBackgroundDrainersFailed).toBe(0)
    await d.sender.close()
  }, 60_000)

  it('marks a slot .failed when the receiver refuses auth, and the next scan skips it', async () => {
    const sfDir = await tmpSfDir()
    await orphan(sfDir, 'locked-out', 5)
    const rec = await recordingReceiver({ token: 'right' })
    cleanups.push(() => rec.receiver.close())

    const wrong = await drainingSender(
      `ws::addr=${rec.addr};sf_dir=${sfDir};sender_id=main;drain_orphans=on;token=wrong;`,
    )
    await waitUntil(() => wrong.sender.counters().totalBackgroundDrainersFailed === 1)
    expect(wrong.of('failed')).toEqual(['locked-out'])
    const failed = wrong.events.find((e) => e.type === 'failed')
    expect(failed?.type === 'failed' && (failed.error as { code?: string }).code).toBe('SF_AUTH_REJECTED')
    const reason = await readFile(path.join(sfDir, 'locked-out', '.failed'), 'utf8')
    expect(reason).toMatch(/rejected authentication \(HTTP 401/)
    expect(wrong.errors.some((e) => (e as { code?: string }).code === 'SF_AUTH_REJECTED')).toBe(true)
    await wrong.sender.close().catch(() => {})

    await orphan(sfDir, 'fine', 3)
    const right = await drainingSender(
      `ws::addr=${rec.addr};sf_dir=${sfDir};sender_id=main;drain_orphans=on;token=right;`,
    )
    await waitUntil(() => right.sender.counters().totalBackgroundDrainersSucceeded === 1)
    expect(right.of('started')).toEqual(['fine'])
    expect(rec.of('locked-out')).toEqual([])
    expect(await segmentsOf(sfDir, 'locked-out')).toHaveLength(1)
    await right.sender.close()

    // The operator fixed the cause and removed the sentinel: the next scan drains it.
    await rm(path.join(sfDir, 'locked-out', '.failed'))
    const again = await drainingSender(
      `ws::addr=${rec.addr};sf_dir=${sfDir};sender_id=main;drain_orphans=on;token=right;`,
    )
    await waitUntil(() => again.sender.counters().totalBackgroundDrainersSucceeded === 1)
    expect(rec.of('locked-out')).toEqual(records(5))
  })

  it('gives up after the reconnect budget and writes .failed', async () => {
    const sfDir = await tmpSfDir()
    await orphan(sfDir, 'far', 2)
    const down = await downPort()
    cleanups.push(() => down.close())
    const d = await drainingSender(
      `ws::addr=127.0.0.1:${down.port};sf_dir=${sfDir};sender_id=main;drain_orphans=on;reconnect_max_duration_millis=300;` +
        'reconnect_initial_backoff_millis=20;reconnect_max_backoff_millis=50;close_flush_timeout_millis=0;',
    )
    await waitUntil(() => d.sender.counters().totalBackgroundDrainersFailed === 1)
    expect(await readFile(path.join(sfDir, 'far', '.failed'), 'utf8')).toMatch(
      /could not reconnect to receiver 127\.0\.0\.1:\d+ since .* within the budget of 300 ms/,
    )
  })

  it('writes .failed for a slot too corrupt to open', async () => {
    const sfDir = await tmpSfDir()
    await orphan(sfDir, 'holey', 200, 1024)
    const segments = (await segmentsOf(sfDir, 'holey')).sort()
    expect(segments.length).toBeGreaterThanOrEqual(3)
    await rm(path.join(sfDir, 'holey', segments[1]!))
    const rec = await recordingReceiver()
    cleanups.push(() => rec.receiver.close())
    const d = await drainingSender(`ws::addr=${rec.addr};sf_dir=${sfDir};sender_id=main;drain_orphans=on;`)
    await waitUntil(() => d.sender.counters().totalBackgroundDrainersFailed === 1)
    expect(await readFile(path.join(sfDir, 'holey', '.failed'), 'utf8')).toMatch(/gap between segments/)
  })

  it('skips a slot whose owner is alive instead of stealing it', async () => {
    const sfDir = await tmpSfDir()
    const live = await openSlot({ sfDir, senderId: 'alive' })
    cleanups.push(() => live.close())
    await live.append(Buffer.from('mine'))
    const rec = await recordingReceiver()
    cleanups.push(() => rec.receiver.close())
    const d = await drainingSender(`ws::addr=${rec.addr};sf_dir=${sfDir};sender_id=main;drain_orphans=on;`)
    await waitUntil(() => d.events.length > 0)
    expect(d.events).toEqual([
      { type: 'skipped', senderId: 'alive', reason: expect.stringMatching(/held by PID/) },
    ])
    expect(await live.append(Buffer.from('still mine'))).toBe(2n)
    expect(rec.got).toEqual([])
  })
})
