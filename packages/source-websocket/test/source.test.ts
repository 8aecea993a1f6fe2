/**
 * The Websocket source against a real `Sender` over 127.0.0.1, with the runner's part played by the
 * test (test/support/reading.ts): acks wait for the commit, durable acks for the landing, a restart
 * resumes dedup from the committed offset, and bad input gets one clear answer.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { openSlot, Sender } from '@skippr/sf'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { freePort, type Reading, startReading } from './support/reading.js'

let dir: string
let port: number
const open: { close(): Promise<unknown> }[] = []

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'skippr-ws-'))
  port = await freePort()
})
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close().catch(() => {})
  await rm(dir, { recursive: true, force: true })
})

async function sender(id: string, extra = '', errors: Error[] = [], sfDir = dir): Promise<Sender> {
  const s = await Sender.fromConfig(
    `ws::addr=127.0.0.1:${port};sf_dir=${sfDir};sender_id=${id};reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=50;close_flush_timeout_millis=0;${extra}`,
    { onError: (error) => void errors.push(error) },
  )
  open.push(s)
  return s
}

async function reading(from?: Parameters<typeof startReading>[1], extra = {}): Promise<Reading> {
  const r = await startReading(port, from, extra)
  open.push({ close: () => r.stop() })
  return r
}

const record = (n: number) => Buffer.from(JSON.stringify({ n }))
const rowsOf = (r: Reading) =>
  r.chunks.flatMap((c) =>
    Buffer.from(c.body)
      .toString()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).n),
  )

/**
 * Reads and commits until `count` rows were read: the receiver hands a sender's next batch over only
 * once the one before is acked, so the runner's commits are what moves a sender on.
 */
async function readCommitting(r: Reading, count: number): Promise<void> {
  for (;;) {
    if (r.chunks.length > 0) r.commit()
    if (rowsOf(r).length >= count) return
    await r.read(r.chunks.length + 1)
  }
}

describe('Websocket source', () => {
  it('acks a sender only after the commit holding its records, with the sender FSNs as the offset', async () => {
    const r = await reading()
    const s = await sender('app')
    for (let n = 1; n <= 3; n++) await s.send(record(n))
    await r.read(1)
    await sleep(200)
    // Read, not committed: nothing acked, however long it waits.
    expect(s.ackedFsn).toBe(0n)
    await readCommitting(r, 3)
    await s.flush()
    expect(s.ackedFsn).toBe(3n)
    expect(rowsOf(r)).toEqual([1, 2, 3])
    expect(r.chunks.at(-1)?.offset).toMatchObject({ state: { app: { slot: s.slotId, fsn: '3' } } })
    expect(r.chunks[0]).toMatchObject({
      namespace: 'events',
      format: 'jsonl',
      schema: { namespace: 'events', fields: [{ name: 'n', type: 'int' }] },
    })
  })

  it('after a restart, records committed before it whose ack was lost are acked without being read again', async () => {
    // Sent before the source listens: the sender's first DATA holds all five, one batch.
    const s = await sender('app')
    for (let n = 1; n <= 5; n++) await s.send(record(n))
    const first = await reading()
    await first.read(1)
    expect(rowsOf(first)).toEqual([1, 2, 3, 4, 5])
    // The commit happened, then the process died before the acks went out.
    const committed = first.chunks[0]!.offset
    await first.stop()
    for (let n = 6; n <= 7; n++) await s.send(record(n))
    const second = await reading(committed)
    await readCommitting(second, 2)
    await s.flush()
    expect(rowsOf(second)).toEqual([6, 7])
    expect(second.chunks.at(-1)?.offset).toMatchObject({ state: { app: { slot: s.slotId, fsn: '7' } } })
  })

  it('refuses a second application reusing a committed sender id, before and after a restart; its records stay in its slot', async () => {
    const first = await sender('app')
    for (let n = 1; n <= 3; n++) await first.send(record(n))
    const r = await reading()
    await readCommitting(r, 3)
    await first.flush()
    await first.close()

    // Another application, its own sf_dir, the same sender_id: its records are FSNs 1..2 as well.
    const other = path.join(dir, 'other')
    const slot = await openSlot({ sfDir: other, senderId: 'app' })
    for (let n = 11; n <= 12; n++) await slot.append(record(n))
    await slot.close()
    const errors: Error[] = []
    const second = await sender('app', '', errors, other)
    await expect.poll(() => errors.length, { timeout: 10_000 }).toBe(1)
    const refused = {
      code: 'SF_SERVER_ERROR',
      category: 'HALT',
      message: expect.stringMatching(/sender id "app" belongs to another slot .*own sender_id/),
    }
    expect(errors[0]).toMatchObject(refused)
    await second.close().catch(() => {})

    const committed = r.commit()
    await r.stop()
    const again = await reading(committed)
    const laterErrors: Error[] = []
    const third = await sender('app', '', laterErrors, other)
    await expect.poll(() => laterErrors.length, { timeout: 10_000 }).toBe(1)
    expect(laterErrors[0]).toMatchObject(refused)
    expect([third.publishedFsn, third.ackedFsn]).toEqual([2n, 0n])
    expect(rowsOf(r)).toEqual([1, 2, 3])
    expect(again.chunks).toEqual([])
  })

  it('resumes from an offset of an earlier version (FSNs without slots) and records the slot from then on', async () => {
    const s = await sender('app')
    for (let n = 1; n <= 5; n++) await s.send(record(n))
    // As committed before slot ids: FSNs 1..3 of `app` are in the destination.
    const r = await reading({ seq: 1, state: { app: '3' } })
    await readCommitting(r, 2)
    await s.flush()
    expect(rowsOf(r)).toEqual([4, 5])
    expect(r.chunks.at(-1)?.offset).toMatchObject({ state: { app: { slot: s.slotId, fsn: '5' } } })
  })

  it('sends a durable ack only once the batch has landed, and again after a restart for what landed before it', async () => {
    const r = await reading()
    const s = await sender('app', 'request_durable_ack=on;')
    await s.send(record(1))
    await r.read(1)
    const offset = r.commit()
    await sleep(200)
    // Committed, not landed: the sender keeps the record.
    expect(s.ackedFsn).toBe(0n)
    r.source.landed(offset)
    await s.flush()
    expect(s.ackedFsn).toBe(1n)

    await s.send(record(2))
    await r.read(2)
    const second = r.commit()
    await r.stop()
    // Restarted with record 2 committed and landed (the runner tells `landed` at start).
    const again = await reading(second)
    again.source.landed(second)
    await s.flush()
    expect(s.ackedFsn).toBe(2n)
    expect(again.chunks).toEqual([])
  })

  it('refuses a record that does not decode to its sender alone (DROP), and takes the others', async () => {
    const errors: Error[] = []
    const s = await sender('app', '', errors)
    await s.send(record(1))
    await s.send(Buffer.from('{"n": 2'))
    await s.send(record(3))
    const r = await reading()
    await readCommitting(r, 2)
    await s.flush()
    expect(rowsOf(r)).toEqual([1, 3])
    await expect.poll(() => errors.length).toBe(1)
    expect(errors[0]).toMatchObject({ code: 'SF_SERVER_ERROR', category: 'DROP', fsn: 2n })
    expect(errors[0]!.message).toMatch(/dropped frame FSN 2: not jsonl: line 1: /)
  })

  it('refuses a sender with a wrong token at the upgrade, without the token in the answer', async () => {
    await reading(undefined, { token: 'right-token' })
    const errors: Error[] = []
    const s = await sender('app', 'token=wrong-token;', errors)
    await s.send(record(1))
    await expect.poll(() => errors.length).toBe(1)
    expect(errors[0]).toMatchObject({ code: 'SF_AUTH_REJECTED' })
    expect(errors[0]!.message).not.toMatch(/right-token/)
  })
})
