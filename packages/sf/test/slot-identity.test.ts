/**
 * Two slots under one sender id (two applications configured alike, or an application that deleted its
 * sf_dir and started again) both number their records from FSN 1. The receiver must never take one
 * slot's records for the other's: every record of both is handed to `onFrames` exactly once, or the
 * newcomer is refused with one clear error naming the sender id, its records kept in its slot. Before
 * slot ids, the second slot's records 1..N were acked as "already delivered" and lost.
 */
import { readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { openMemorySlot } from '../src/memory-slot.js'
import type { DeliveredPosition, ReceivedBatch } from '../src/receiver.js'
import { Sender } from '../src/sender.js'
import { openSlot } from '../src/slot.js'
import { encodeData, encodeHello } from '../src/wire.js'
import { recordingReceiver, rejection, text, waitUntil } from './support/harness.js'
import { tmpSfDir } from './support/helpers.js'
import { connectRaw, helloRaw, type RawClient } from './support/raw-client.js'

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** An application: a Sender on a disk slot of its own under `sf_dir`, with its errors collected. */
async function app(addr: string, sfDir: string, senderId = 'orders') {
  const errors: Error[] = []
  const sender = await Sender.fromConfig(
    `ws::addr=${addr};sf_dir=${sfDir};sender_id=${senderId};reconnect_initial_backoff_millis=20;reconnect_max_backoff_millis=100;close_flush_timeout_millis=0;`,
    { onError: (e) => void errors.push(e) },
  )
  cleanups.push(() => sender.close().catch(() => {}))
  return { sender, errors }
}

async function sendAll(sender: Sender, texts: string[]): Promise<void> {
  for (const t of texts) await sender.send(text(t))
}

/** An sf_dir whose slot `orders` holds `texts` unsent: an application's records waiting for its sender. */
async function slotHolding(texts: string[]): Promise<string> {
  const sfDir = await tmpSfDir()
  const slot = await openSlot({ sfDir, senderId: 'orders' })
  for (const t of texts) await slot.append(text(t))
  await slot.close()
  return sfDir
}

/** The refusal a sender latches: a HALT naming the sender id and the other slot. */
const refusedAsTaken = {
  code: 'SF_SERVER_ERROR',
  category: 'HALT',
  message: expect.stringMatching(/receiver refused the sender: sender id "orders" .*another slot/),
}

/** A receiver that records delivered frames and keeps what an application would persist per sender id. */
async function receiverWithOffset(held = new Map<string, DeliveredPosition>()) {
  const reported: Array<{ code?: string; message: string }> = []
  const rec = await recordingReceiver({
    delivered: (senderId) => held.get(senderId) ?? 0n,
    onFrames: (batch: ReceivedBatch) => {
      for (const f of batch.frames)
        rec.got.push({ senderId: batch.senderId, fsn: f.fsn, text: Buffer.from(f.payload).toString() })
      held.set(batch.senderId, { fsn: batch.frames.at(-1)!.fsn, slotId: batch.slotId })
      return undefined
    },
    onError: (e) => reported.push(e as Error & { code?: string }),
  })
  cleanups.push(() => rec.receiver.close())
  return { ...rec, held, reported }
}

describe('slot identity', () => {
  it('keeps a slot id across reopening; a recreated slot and every memory slot get a new one', async () => {
    const sfDir = await tmpSfDir()
    const first = await openSlot({ sfDir, senderId: 'orders' })
    const id = first.slotId
    await first.append(text('a'))
    await first.close()
    const reopened = await openSlot({ sfDir, senderId: 'orders' })
    expect(reopened.slotId).toBe(id)
    await reopened.close()
    expect((await readFile(path.join(sfDir, 'orders', '.slot-id'), 'utf8')).trim()).toBe(id)

    await rm(path.join(sfDir, 'orders'), { recursive: true })
    const recreated = await openSlot({ sfDir, senderId: 'orders' })
    expect(recreated.slotId).not.toBe(id)
    await recreated.close()
    expect(openMemorySlot().slotId).not.toBe(openMemorySlot().slotId)
  })

  it('refuses to open a slot whose id file is damaged rather than inventing a new identity', async () => {
    const sfDir = await tmpSfDir()
    await (await openSlot({ sfDir, senderId: 'orders' })).close()
    await writeFile(path.join(sfDir, 'orders', '.slot-id'), 'garbage')
    const error = await rejection(openSlot({ sfDir, senderId: 'orders' }))
    expect(error.code).toBe('SF_SLOT_CORRUPT')
    expect(error.message).toMatch(/\.slot-id does not hold a slot id/)
  })

  it('refuses a second slot under a sender id while the first is connected, and keeps the first', async () => {
    const { addr, of, reported } = await receiverWithOffset()
    const a = await app(addr, await tmpSfDir())
    await sendAll(a.sender, ['a1', 'a2', 'a3'])
    await a.sender.flush()

    const b = await app(addr, await slotHolding(['b1', 'b2']))
    await waitUntil(() => b.errors.length > 0, 10_000, 'the newcomer to be refused')
    expect(b.errors).toEqual([expect.objectContaining(refusedAsTaken)])
    expect(b.errors[0]!.message).toMatch(/connected now/)
    expect(reported).toEqual([expect.objectContaining({ code: 'SF_SENDER_ID_TAKEN' })])
    // Nothing of the newcomer was acked: its records stay in its slot.
    expect([b.sender.publishedFsn, b.sender.ackedFsn]).toEqual([2n, 0n])
    await expect(b.sender.send(text('b3'))).rejects.toMatchObject({ code: 'SF_SERVER_ERROR' })

    // The first application was not superseded: it carries on on the same connection.
    await sendAll(a.sender, ['a4'])
    await a.sender.flush()
    expect(a.sender.counters().totalReconnectAttempts).toBe(0)
    expect(of('orders')).toEqual(['a1', 'a2', 'a3', 'a4'])
  })

  it('refuses a new slot under a known sender id once the first is gone, before and after a receiver restart', async () => {
    const held = new Map<string, DeliveredPosition>()
    const first = await receiverWithOffset(held)
    const aDir = await tmpSfDir()
    const a = await app(first.addr, aDir)
    await sendAll(a.sender, ['a1', 'a2'])
    await a.sender.flush()
    await a.sender.close()

    // One after the other, same receiver: the second slot's FSNs 1..2 are not "already delivered".
    const b = await app(first.addr, await slotHolding(['b1', 'b2']))
    await waitUntil(() => b.errors.length > 0, 10_000, 'the newcomer to be refused')
    expect(b.errors).toEqual([expect.objectContaining(refusedAsTaken)])
    expect(b.errors[0]!.message).toMatch(/numbered from 1 again/)
    expect([b.sender.publishedFsn, b.sender.ackedFsn]).toEqual([2n, 0n])
    expect(first.of('orders')).toEqual(['a1', 'a2'])
    await first.receiver.close()

    // A restarted receiver knows the slot from the application's `delivered()`.
    const second = await receiverWithOffset(held)
    const c = await app(second.addr, await slotHolding(['c1']))
    await waitUntil(() => c.errors.length > 0, 10_000, 'the newcomer to be refused')
    expect(c.errors).toEqual([expect.objectContaining(refusedAsTaken)])
    // The slot that holds the id comes back and continues after what was delivered.
    const again = await app(second.addr, aDir)
    await sendAll(again.sender, ['a3'])
    await again.sender.flush()
    expect(second.of('orders')).toEqual(['a3'])
    expect(held.get('orders')).toEqual({ fsn: 3n, slotId: again.sender.slotId })
  })

  it('lets the same slot take its id over from a stale connection of its own', async () => {
    const { r, url } = await rawReceiver()
    const slotId = '00000000-0000-4000-8000-000000000001'
    const old = await rawClient(url, 'orders', slotId)
    old.ws.send(encodeData(1n, [text('x')]))
    await old.waitFor((m) => m.type === 'ack' && m.fsn === 1n)
    const fresh = await rawClient(url, 'orders', slotId)
    expect((await old.closed).code).toBe(4000)
    fresh.ws.send(encodeData(1n, [text('x'), text('y')]))
    await fresh.waitFor((m) => m.type === 'ack' && m.fsn === 2n)
    expect(r.of('orders')).toEqual(['x', 'y'])
  })

  it('takes the first slot to connect as the one a plain FSN from delivered() counts (offsets of earlier versions)', async () => {
    const { url, of, receiver } = await rawReceiver({ delivered: () => 2n })
    const known = '00000000-0000-4000-8000-00000000000a'
    const c = await rawClient(url, 'orders', known)
    c.ws.send(encodeData(1n, [text('old1'), text('old2'), text('new3')]))
    await c.waitFor((m) => m.type === 'ack' && m.fsn === 3n)
    expect(of('orders')).toEqual(['new3'])
    c.ws.close()
    await c.closed
    const other = await connectRaw(receiver.url)
    cleanups.push(() => other.ws.terminate())
    other.ws.send(encodeHello('orders', false, '00000000-0000-4000-8000-00000000000b'))
    const refusal = await other.waitFor((m) => m.type === 'error')
    expect(refusal).toMatchObject({ category: 'HALT', fsn: 0n })
    expect(await other.closed).toMatchObject({ code: 4001 })
  })

  it('still dedups a version 1 sender (no slot id) by sender id alone', async () => {
    const { url, of } = await rawReceiver()
    const c = await rawClient(url, 'orders')
    c.ws.send(encodeData(1n, [text('a')]))
    await c.waitFor((m) => m.type === 'ack' && m.fsn === 1n)
    const again = await rawClient(url, 'orders')
    again.ws.send(encodeData(1n, [text('a'), text('b')]))
    await again.waitFor((m) => m.type === 'ack' && m.fsn === 2n)
    expect(of('orders')).toEqual(['a', 'b'])
  })
})

async function rawReceiver(extra: Parameters<typeof recordingReceiver>[0] = {}) {
  const rec = await recordingReceiver(extra)
  cleanups.push(() => rec.receiver.close())
  return { ...rec, r: rec, url: rec.receiver.url }
}

async function rawClient(url: string, senderId: string, slotId?: string): Promise<RawClient> {
  const c = await connectRaw(url)
  cleanups.push(() => c.ws.terminate())
  await helloRaw(c, senderId, false, slotId)
  return c
}
