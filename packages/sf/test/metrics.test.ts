/**
 * `senderMetrics` in a prom-client registry: a real Sender to a real Receiver (through the fault proxy
 * to cut the link, with a second sender draining an orphan slot, and one the receiver halts). Each
 * scrape's values equal the sender's counters at that moment.
 */
import { Registry } from 'prom-client'
import { afterEach, describe, expect, it } from 'vitest'
import { HaltSenderError } from '../src/errors.js'
import { senderMetrics } from '../src/metrics.js'
import { Sender } from '../src/sender.js'
import type { SenderCounters } from '../src/sender-counters.js'
import { openSlot } from '../src/slot.js'
import { startFaultProxy } from './support/fault-proxy.js'
import { recordingReceiver, rejection, text, waitUntil } from './support/harness.js'
import { tmpSfDir } from './support/helpers.js'

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function open(config: string): Promise<Sender> {
  const sender = await Sender.fromConfig(config, { onError: () => {} })
  cleanups.push(() => sender.close().catch(() => {}))
  return sender
}

/** The sender's metrics registered in a registry of their own, and a scrape of it: name → value. */
function scraped(sender: Sender): () => Promise<Map<string, number>> {
  const registry = new Registry()
  for (const metric of senderMetrics(sender, { sender: 'app' })) registry.registerMetric(metric as never)
  return async () => {
    const samples = new Map<string, number>()
    for (const line of (await registry.metrics()).split('\n')) {
      const match = /^(\w+)\{sender="app"\} (\S+)$/.exec(line)
      if (match) samples.set(match[1]!, Number(match[2]))
    }
    return samples
  }
}

/** What the scrape must show for these counters. */
function expected(c: SenderCounters, sender: Sender): Map<string, number> {
  return new Map([
    ['skippr_sf_sender_reconnect_attempts_total', c.totalReconnectAttempts],
    ['skippr_sf_sender_reconnects_succeeded_total', c.totalReconnectsSucceeded],
    ['skippr_sf_sender_frames_replayed_total', c.totalFramesReplayed],
    ['skippr_sf_sender_server_errors_total', c.totalServerErrors],
    ['skippr_sf_sender_error_notifications_delivered_total', c.totalErrorNotificationsDelivered],
    ['skippr_sf_sender_error_notifications_dropped_total', c.droppedErrorNotifications],
    ['skippr_sf_sender_backpressure_stalls_total', c.totalBackpressureStalls],
    ['skippr_sf_sender_terminal_error', c.lastTerminalError === null ? 0 : 1],
    ['skippr_sf_sender_unacked_frames', Number(sender.publishedFsn - sender.ackedFsn)],
    ['skippr_sf_drainers_active', c.activeBackgroundDrainers],
    ['skippr_sf_drainers_succeeded_total', c.totalBackgroundDrainersSucceeded],
    ['skippr_sf_drainers_failed_total', c.totalBackgroundDrainersFailed],
  ])
}

async function sendAll(sender: Sender, from: number, to: number): Promise<void> {
  await Promise.all(
    Array.from({ length: to - from + 1 }, (_, i) => sender.sendBlocking(text(`r${from + i}`))),
  )
}

describe('senderMetrics', () => {
  it('moves with reconnects and replays: unacked frames while the link is stalled, replayed after', async () => {
    const rec = await recordingReceiver()
    cleanups.push(() => rec.receiver.close())
    const proxy = await startFaultProxy(rec.receiver.port)
    cleanups.push(() => proxy.close())
    const sender = await open(
      `ws::addr=127.0.0.1:${proxy.port};sf_dir=${await tmpSfDir()};sender_id=f;` +
        'reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;',
    )
    const scrape = scraped(sender)
    await sendAll(sender, 1, 10)
    await sender.flush()
    expect(await scrape()).toEqual(expected(sender.counters(), sender))

    proxy.stall()
    await sendAll(sender, 11, 60)
    const stalled = await scrape()
    expect(stalled.get('skippr_sf_sender_unacked_frames')).toBe(50)
    expect(stalled).toEqual(expected(sender.counters(), sender))

    proxy.reset()
    proxy.resume()
    await sender.flush()
    const after = await scrape()
    expect(after).toEqual(expected(sender.counters(), sender))
    expect(after.get('skippr_sf_sender_reconnect_attempts_total')).toBe(1)
    expect(after.get('skippr_sf_sender_reconnects_succeeded_total')).toBe(1)
    expect(after.get('skippr_sf_sender_frames_replayed_total')).toBe(50)
    expect(after.get('skippr_sf_sender_unacked_frames')).toBe(0)
    expect(rec.of('f')).toHaveLength(60)
  })

  it('counts a drained orphan slot', async () => {
    const sfDir = await tmpSfDir()
    const orphan = await openSlot({ sfDir, senderId: 'gone' })
    for (let i = 1; i <= 20; i++) await orphan.append(text(`o${i}`))
    await orphan.close()
    // The receiver holds the drainer's frames until the scrape has seen it running.
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let got = 0
    const rec = await recordingReceiver({
      onFrames: async ({ frames }) => {
        await held
        got += frames.length
        return undefined
      },
    })
    cleanups.push(() => rec.receiver.close())
    const sender = await open(`ws::addr=${rec.addr};sf_dir=${sfDir};sender_id=main;drain_orphans=on;`)
    const scrape = scraped(sender)
    await waitUntil(() => sender.counters().activeBackgroundDrainers === 1)
    const running = await scrape()
    expect(running).toEqual(expected(sender.counters(), sender))
    expect(running.get('skippr_sf_drainers_active')).toBe(1)
    release()
    await waitUntil(() => sender.counters().activeBackgroundDrainers === 0)
    const samples = await scrape()
    expect(samples).toEqual(expected(sender.counters(), sender))
    expect(samples.get('skippr_sf_drainers_succeeded_total')).toBe(1)
    expect(samples.get('skippr_sf_drainers_active')).toBe(0)
    expect(got).toBe(20)
  })

  it('latches the terminal error gauge on a HALT', async () => {
    const rec = await recordingReceiver({
      onFrames: () => {
        throw new HaltSenderError('stop')
      },
    })
    cleanups.push(() => rec.receiver.close())
    const sender = await open(`ws::addr=${rec.addr};sf_dir=${await tmpSfDir()};`)
    const scrape = scraped(sender)
    expect((await scrape()).get('skippr_sf_sender_terminal_error')).toBe(0)
    await sender.send(text('a'))
    await rejection(sender.flush())
    await waitUntil(() => sender.counters().totalErrorNotificationsDelivered === 1)
    const samples = await scrape()
    expect(samples).toEqual(expected(sender.counters(), sender))
    expect(samples.get('skippr_sf_sender_terminal_error')).toBe(1)
    expect(samples.get('skippr_sf_sender_server_errors_total')).toBe(1)
  })
})
