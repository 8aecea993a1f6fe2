/**
 * Sender → fault-injecting TCP proxy → receiver, all real, on 127.0.0.1. Every scenario ends with the
 * receiver's application having seen each record exactly once and in order.
 * Records in the random-cut scenario: SKIPPR_SF_FAULT_RECORDS (default 3000).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { Sender } from '../src/sender.js'
import { startFaultProxy } from './support/fault-proxy.js'
import { recordingReceiver, waitUntil } from './support/harness.js'
import { tmpSfDir } from './support/helpers.js'

const RECORDS = Number(process.env.SKIPPR_SF_FAULT_RECORDS ?? 3000)
const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function setup(keepaliveMs = 1000) {
  const rec = await recordingReceiver()
  cleanups.push(() => rec.receiver.close())
  const proxy = await startFaultProxy(rec.receiver.port)
  cleanups.push(() => proxy.close())
  const sfDir = await tmpSfDir()
  const sender = await Sender.fromConfig(
    `ws::addr=127.0.0.1:${proxy.port};sf_dir=${sfDir};sender_id=f;keepalive_interval_millis=${keepaliveMs};` +
      'reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;',
    { onError: () => {} },
  )
  cleanups.push(() => sender.close().catch(() => {}))
  return { ...rec, proxy, sender }
}

const record = (i: number): Buffer => Buffer.from(`${i}:${'x'.repeat(900 + (i % 200))}`)

function expectExactlyOnceInOrder(texts: string[], n: number): void {
  expect(texts.length).toBe(n)
  texts.forEach((t, i) => {
    if (t !== record(i + 1).toString())
      throw new Error(`record ${i + 1} is wrong or out of order: ${t.slice(0, 20)}`)
  })
}

/** Appends records `from..to` in groups of 50 concurrent calls (they share one fsync). */
async function sendAll(sender: Sender, from: number, to: number): Promise<void> {
  for (let i = from; i <= to; i += 50) {
    const group = Array.from({ length: Math.min(50, to - i + 1) }, (_, k) =>
      sender.sendBlocking(record(i + k)),
    )
    await Promise.all(group)
  }
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe('sender through a faulty network', () => {
  it('survives connections cut at random byte counts (mid-frame)', async () => {
    const { sender, proxy, of } = await setup()
    proxy.chaos([64 * 1024, 1024 * 1024])
    await sendAll(sender, 1, RECORDS)
    await sender.flush()
    proxy.chaos(undefined)
    expectExactlyOnceInOrder(of('f'), RECORDS)
    const c = sender.counters()
    expect(c.totalReconnectAttempts).toBeGreaterThan(0)
    expect(c.totalReconnectsSucceeded).toBe(c.totalReconnectAttempts)
    expect(proxy.accepted).toBeGreaterThan(c.totalReconnectAttempts)
  })

  it('replays unacked frames after a reset and counts them', async () => {
    const { sender, proxy, of, got } = await setup()
    await sendAll(sender, 1, 10)
    await sender.flush()
    proxy.stall()
    await sendAll(sender, 11, 60)
    await pause(100)
    expect(got.length).toBe(10)
    proxy.reset()
    proxy.resume()
    await sender.flush()
    expectExactlyOnceInOrder(of('f'), 60)
    expect(sender.counters()).toMatchObject({
      totalFramesReplayed: 50,
      totalReconnectAttempts: 1,
      totalReconnectsSucceeded: 1,
    })
  })

  it('cuts a connection mid-frame and resends that frame once', async () => {
    const { sender, proxy, of } = await setup()
    await sendAll(sender, 1, 5)
    await sender.flush()
    proxy.dropMidFrame()
    await sendAll(sender, 6, 8)
    await sender.flush()
    expectExactlyOnceInOrder(of('f'), 8)
    expect(sender.counters().totalReconnectsSucceeded).toBe(1)
  })

  it('declares a stalled connection dead after the keepalive interval and reconnects', async () => {
    const { sender, proxy, of } = await setup(300)
    await sendAll(sender, 1, 5)
    await sender.flush()
    proxy.stall()
    await sendAll(sender, 6, 20)
    await waitUntil(() => sender.counters().totalReconnectAttempts === 1, 5000, 'the stall to be detected')
    proxy.resume()
    await sender.flush()
    expectExactlyOnceInOrder(of('f'), 20)
    expect(sender.counters().totalReconnectsSucceeded).toBe(1)
  })

  it('rides out a stall shorter than the keepalive interval on the same connection', async () => {
    const { sender, proxy, of } = await setup(3000)
    await sendAll(sender, 1, 5)
    proxy.stall()
    await sendAll(sender, 6, 20)
    await pause(400)
    proxy.resume()
    await sender.flush()
    expectExactlyOnceInOrder(of('f'), 20)
    expect(sender.counters().totalReconnectAttempts).toBe(0)
    expect(proxy.accepted).toBe(1)
  })

  it('keeps retrying while connections are refused; attempts − succeeded shows the outage', async () => {
    const { sender, proxy, of } = await setup()
    await sendAll(sender, 1, 5)
    await sender.flush()
    proxy.refuse(true)
    proxy.reset()
    await sendAll(sender, 6, 10)
    await waitUntil(() => proxy.accepted >= 4, 5000, 'several refused attempts')
    let c = sender.counters()
    expect(c.totalReconnectAttempts - c.totalReconnectsSucceeded).toBe(1)
    proxy.refuse(false)
    await sender.flush()
    c = sender.counters()
    expect(c.totalReconnectAttempts).toBe(1)
    expect(c.totalReconnectsSucceeded).toBe(1)
    expectExactlyOnceInOrder(of('f'), 10)
  })
})
