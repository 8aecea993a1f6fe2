import { readdir } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { WebSocketServer } from 'ws'
import { HaltSenderError } from '../src/errors.js'
import { Sender } from '../src/sender.js'
import { decodeClientMessage, encodeAck, encodeWelcome, SUBPROTOCOL } from '../src/wire.js'
import { downPort, recordingReceiver, rejection, text, waitUntil } from './support/harness.js'
import { tmpSfDir } from './support/helpers.js'
import { makeSelfSignedCertificate } from './support/tls.js'

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function harness(extra: Parameters<typeof recordingReceiver>[0] = {}) {
  const rec = await recordingReceiver(extra)
  cleanups.push(() => rec.receiver.close())
  const sfDir = await tmpSfDir()
  return { ...rec, sfDir }
}

/** Opens a sender and makes sure it is closed after the test, whatever happens. */
async function open(
  config: Parameters<typeof Sender.fromConfig>[0],
  handlers: Parameters<typeof Sender.fromConfig>[1] = {},
) {
  const sender = await Sender.fromConfig(config, { onError: () => {}, ...handlers })
  cleanups.push(() => sender.close().catch(() => {}))
  return sender
}

/** A receiver that is down, for the duration of the test. */
async function downReceiver() {
  const d = await downPort()
  cleanups.push(() => d.close())
  return d
}

const numbered = (n: number, from = 1): string[] => Array.from({ length: n }, (_, i) => `r${from + i}`)

/** A receiver that records each DATA message's frames and acks them, or never acks with `ack: false`. */
async function messageRecorder(ack = true) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: () => SUBPROTOCOL })
  await new Promise((resolve) => wss.once('listening', resolve))
  cleanups.push(() => new Promise((resolve) => wss.close(resolve)))
  const messages: Array<Array<{ fsn: bigint; payload: Buffer }>> = []
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const msg = decodeClientMessage(data as Buffer)
      if (msg.type === 'hello') return ws.send(encodeWelcome(1 << 24))
      messages.push(msg.frames.map((f) => ({ fsn: f.fsn, payload: Buffer.from(f.payload) })))
      if (ack) ws.send(encodeAck(msg.frames.at(-1)!.fsn))
    })
  })
  return { addr: `127.0.0.1:${(wss.address() as AddressInfo).port}`, messages }
}

describe('Sender', () => {
  it('forwards records in memory mode when sf_dir is not set', async () => {
    const h = await harness()
    const sender = await open(`ws::addr=${h.addr};sender_id=mem;`)
    for (const r of numbered(200)) await sender.send(text(r))
    await sender.flush()
    expect(sender.ackedFsn).toBe(200n)
    await sender.close()
    const ids = new Set(h.got.map((g) => g.senderId))
    expect(ids.size).toBe(1)
    // FSNs restart with each memory-mode process, so it announces a fresh id each time.
    expect([...ids][0]).toMatch(/^mem\.mem-[0-9a-f]{12}$/)
    expect(h.got.map((g) => g.text)).toEqual(numbered(200))
  })

  it('forwards from a disk slot, trims what is acked, and continues FSNs after a drained restart', async () => {
    const h = await harness()
    const config = `ws::addr=${h.addr};sf_dir=${h.sfDir};sender_id=orders;`
    const first = await open(config)
    for (const r of numbered(50)) await first.send(text(r))
    await first.close()
    expect((await readdir(path.join(h.sfDir, 'orders'))).filter((n) => n.endsWith('.sfa'))).toEqual([])
    const second = await open(config)
    expect(second.publishedFsn).toBe(50n)
    for (const r of numbered(50, 51)) await second.sendBlocking(text(r))
    await second.close()
    expect(h.of('orders')).toEqual(numbered(100))
    expect(h.got.at(-1)?.fsn).toBe(100n)
  })

  it('delivers what each call was given even when the caller reuses its buffer at once', async () => {
    const h = await harness()
    const down = await downReceiver()
    const buffer = Buffer.alloc(2)
    const fill = (i: number): Buffer => {
      buffer.write(String(i).padStart(2, '0'))
      return buffer
    }
    // Sent while connected: forwarded from memory.
    const sender = await open(`ws::addr=${h.addr};sf_dir=${h.sfDir};sender_id=reuse;`)
    await Promise.all(Array.from({ length: 40 }, (_, i) => sender.sendBlocking(fill(i))))
    await sender.flush()
    await sender.close()
    expect(h.of('reuse')).toEqual(Array.from({ length: 40 }, (_, i) => String(i).padStart(2, '0')))
    // Sent while the receiver is down, then replayed from disk by the next sender.
    const offline = await open(
      `ws::addr=127.0.0.1:${down.port};sf_dir=${h.sfDir};sender_id=reuse;close_flush_timeout_millis=0;`,
    )
    await Promise.all(Array.from({ length: 40 }, (_, i) => offline.send(fill(40 + i))))
    await offline.close()
    const again = await open(`ws::addr=${h.addr};sf_dir=${h.sfDir};sender_id=reuse;`)
    await again.flush()
    expect(h.of('reuse')).toEqual(Array.from({ length: 80 }, (_, i) => String(i).padStart(2, '0')))
  })

  it('sends a large record from memory as its own DATA message, small ones batched, replays from disk batched', async () => {
    const KiB = 1024
    const sizes = [1, 64, 1, 1, 100, 70, 2, 1, 64, 64, 64].map((k) => k * KiB)
    const records = sizes.map((size, i) => Buffer.alloc(size, i + 1))
    const rx = await messageRecorder()
    const sfDir = await tmpSfDir()
    const sender = await open(`ws::addr=${rx.addr};sf_dir=${sfDir};sender_id=lone;`)
    await Promise.all(records.map((r) => sender.send(r)))
    await sender.flush()
    const frames = rx.messages.flat()
    expect(frames.map((f) => f.fsn)).toEqual(records.map((_, i) => BigInt(i + 1)))
    expect(frames.every((f, i) => f.payload.equals(records[i]!))).toBe(true)
    for (const message of rx.messages) {
      if (message.some((f) => f.payload.length >= 64 * KiB)) expect(message).toHaveLength(1)
    }
    expect(rx.messages.some((m) => m.length > 1)).toBe(true)
    await sender.close()

    // Unacked records replayed from disk by the next sender go in shared messages, as before.
    const silent = await messageRecorder(false)
    const offline = await open(
      `ws::addr=${silent.addr};sf_dir=${sfDir};sender_id=lone;close_flush_timeout_millis=0;`,
    )
    await Promise.all(records.map((r) => offline.send(r)))
    await waitUntil(() => silent.messages.flat().length === records.length)
    await offline.close()
    const replay = await messageRecorder()
    const next = await open(`ws::addr=${replay.addr};sf_dir=${sfDir};sender_id=lone;`)
    await next.flush()
    expect(replay.messages.flat().map((f) => f.fsn)).toEqual(
      records.map((_, i) => BigInt(records.length + i + 1)),
    )
    expect(replay.messages.some((m) => m.filter((f) => f.payload.length >= 64 * KiB).length > 1)).toBe(true)
  })

  it('accepts an options object', async () => {
    const h = await harness()
    const sender = await open({ addr: h.addr, sfDir: h.sfDir, senderId: 'opts' })
    await sender.send(text('x'))
    await sender.flush()
    expect(h.of('opts')).toEqual(['x'])
  })

  it('close() times out with SF_CLOSE_TIMEOUT, keeps the data on disk, and the next sender delivers it', async () => {
    const { port } = await downReceiver()
    const sfDir = await tmpSfDir()
    const config = `ws::addr=127.0.0.1:${port};sf_dir=${sfDir};sender_id=s;close_flush_timeout_millis=300;`
    const sender = await open(config)
    for (const r of numbered(10)) await sender.send(text(r))
    const started = Date.now()
    const e = await rejection(sender.close())
    expect(Date.now() - started).toBeGreaterThanOrEqual(290)
    expect(e.code).toBe('SF_CLOSE_TIMEOUT')
    expect(e.message).toMatch(/10 frames unacknowledged; they stay in .*s and are sent by the next sender/)
    expect(sender.counters().totalReconnectAttempts).toBe(1)
    expect(sender.counters().totalReconnectsSucceeded).toBe(0)

    const rec = await recordingReceiver()
    cleanups.push(() => rec.receiver.close())
    const next = await open(`ws::addr=${rec.addr};sf_dir=${sfDir};sender_id=s;`)
    await next.flush()
    expect(rec.of('s')).toEqual(numbered(10))
  })

  it('close_flush_timeout_millis=0 or -1 skips the wait', async () => {
    const { port } = await downReceiver()
    for (const skip of ['0', '-1']) {
      const sender = await open(`ws::addr=127.0.0.1:${port};close_flush_timeout_millis=${skip};`)
      await sender.send(text('lost'))
      const started = Date.now()
      await sender.close()
      expect(Date.now() - started).toBeLessThan(1500)
    }
  })

  it('reports DROP errors to the handler and keeps going', async () => {
    const errors: Array<{ code: string; category: string; fsn: bigint }> = []
    const h = await harness({
      onFrames: ({ frames }) => ({
        drop: frames.filter((f) => Number(f.fsn) % 10 === 0).map((f) => ({ fsn: f.fsn, reason: 'no' })),
      }),
    })
    const sender = await open(`ws::addr=${h.addr};sf_dir=${h.sfDir};`, {
      onError: (e) => void errors.push(e as never),
    })
    for (const r of numbered(30)) await sender.send(text(r))
    await sender.flush()
    await waitUntil(() => errors.length === 3)
    expect(errors.map((e) => [e.code, e.category, e.fsn])).toEqual([
      ['SF_SERVER_ERROR', 'DROP', 10n],
      ['SF_SERVER_ERROR', 'DROP', 20n],
      ['SF_SERVER_ERROR', 'DROP', 30n],
    ])
    expect(sender.counters()).toMatchObject({
      totalServerErrors: 3,
      totalErrorNotificationsDelivered: 3,
      lastTerminalError: null,
    })
    await sender.close()
  })

  it('latches a HALT: send and flush throw it, close resolves once it was delivered', async () => {
    const errors: Error[] = []
    const h = await harness({
      onFrames: ({ frames }) => {
        if (frames.some((f) => f.fsn === 3n)) throw new HaltSenderError('table orders was dropped')
        return undefined
      },
    })
    const sender = await open(`ws::addr=${h.addr};sf_dir=${h.sfDir};`, {
      onError: (e) => void errors.push(e),
    })
    await sender.send(text('a'))
    await sender.flush()
    await sender.send(text('b'))
    await sender.send(text('c'))
    const halt = await rejection(sender.flush())
    expect(halt).toMatchObject({ code: 'SF_SERVER_ERROR', category: 'HALT' })
    expect(halt.message).toMatch(/receiver halted the sender at FSN \d: table orders was dropped/)
    await expect(sender.send(text('d'))).rejects.toBe(halt)
    const counters = sender.counters()
    expect(counters.lastTerminalError).toBe(halt)
    expect(counters.totalServerErrors).toBe(1)
    await waitUntil(() => errors.length === 1)
    expect(errors[0]).toBe(halt)
    await sender.close()
  })

  it('close() rethrows a latched error the handler never got, and counts the dropped notifications', async () => {
    const h = await harness({
      onFrames: ({ frames }) => {
        if (frames.some((f) => f.fsn === 5n)) throw new HaltSenderError('stop')
        return { drop: frames.filter((f) => f.fsn < 5n).map((f) => ({ fsn: f.fsn, reason: 'dup' })) }
      },
    })
    const blocked = new Promise<void>(() => {})
    const sender = await open(`ws::addr=${h.addr};sf_dir=${h.sfDir};error_inbox_capacity=1;`, {
      onError: () => blocked, // never finishes: everything after the first notification piles up
    })
    for (const r of numbered(4)) await sender.send(text(r))
    await sender.flush()
    await sender.send(text('r5'))
    await waitUntil(() => sender.counters().lastTerminalError !== null)
    const e = await rejection(sender.close())
    expect(e).toMatchObject({ code: 'SF_SERVER_ERROR', category: 'HALT' })
    const counters = sender.counters()
    expect(counters.totalServerErrors).toBe(5)
    expect(counters.totalErrorNotificationsDelivered).toBe(0)
    // 4 DROPs + the HALT: one sits in the handler, the other four did not fit or never got there.
    expect(counters.droppedErrorNotifications).toBe(4)
  })

  it('names the reason when the slot is full: a slow receiver vs reconnecting since <time>, attempt <n>', async () => {
    let delivered = 0
    const stuck = await harness({
      onFrames: () => {
        delivered++
        return new Promise<undefined>(() => {}) // the application never finishes: no acks
      },
    })
    const slow = await open(
      `ws::addr=${stuck.addr};sf_max_total_bytes=2048;sf_append_deadline_millis=150;close_flush_timeout_millis=0;`,
    )
    await slow.send(Buffer.alloc(100))
    await waitUntil(() => delivered === 1)
    let full: Awaited<ReturnType<typeof rejection>> | undefined
    for (let i = 0; i < 100 && !full; i++) {
      try {
        await slow.send(Buffer.alloc(100))
      } catch (e) {
        full = e as never
      }
    }
    expect(full).toMatchObject({ code: 'SF_BACKPRESSURE', reason: 'server-slower' })
    expect(full?.message).toMatch(
      /receiver is acknowledging \(acked FSN 0 of \d+\) but slower than records are sent/,
    )
    const timedOut = await rejection(slow.sendBlocking(Buffer.alloc(100)))
    expect(timedOut).toMatchObject({ code: 'SF_APPEND_DEADLINE', reason: 'server-slower' })
    expect(timedOut.message).toMatch(/^sendBlocking waited 150 ms for space in the full slot/)
    expect(slow.counters().totalBackpressureStalls).toBe(2)
    await slow.close()

    const { port } = await downReceiver()
    const down = await open(
      `ws::addr=127.0.0.1:${port};sf_max_total_bytes=2048;sf_append_deadline_millis=400;close_flush_timeout_millis=0;` +
        'reconnect_initial_backoff_millis=20;reconnect_max_backoff_millis=40;',
    )
    for (let i = 0; i < 18; i++) await down.send(Buffer.alloc(100))
    await expect(down.send(Buffer.alloc(100))).rejects.toMatchObject({
      code: 'SF_BACKPRESSURE',
      reason: 'reconnecting',
    })
    const waiting = await rejection(down.sendBlocking(Buffer.alloc(100)))
    expect(waiting).toMatchObject({ code: 'SF_APPEND_DEADLINE', reason: 'reconnecting' })
    expect(waiting.message).toMatch(
      new RegExp(
        `reconnecting to 127\\.0\\.0\\.1:${port} since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z, attempt ([2-9]|\\d\\d+) \\(last error: `,
      ),
    )
    expect(waiting.cause).toMatchObject({ code: 'SF_APPEND_DEADLINE' })
    expect(down.counters().totalBackpressureStalls).toBe(2)
  })

  it('with request_durable_ack=on trims only on durable acks', async () => {
    const h = await harness({ durableAck: 'manual' })
    const sender = await open(`ws::addr=${h.addr};sf_dir=${h.sfDir};sender_id=d;request_durable_ack=on;`)
    for (const r of numbered(5)) await sender.send(text(r))
    await waitUntil(() => h.got.length === 5)
    let flushed = false
    const flushing = sender.flush().then(() => {
      flushed = true
    })
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(sender.ackedFsn).toBe(0n)
    expect(flushed).toBe(false)
    h.receiver.markDurable('d', 3n)
    await waitUntil(() => sender.ackedFsn === 3n)
    expect(flushed).toBe(false)
    h.receiver.markDurable('d', 5n)
    await flushing
    expect(sender.ackedFsn).toBe(5n)
  })

  it('sends the bearer token; a refused token is a terminal SF_AUTH_REJECTED', async () => {
    const h = await harness({ token: 'sesame' })
    const ok = await open(`ws::addr=${h.addr};token=sesame;`)
    await ok.send(text('in'))
    await ok.flush()
    const errors: Error[] = []
    const bad = await open(`ws::addr=${h.addr};token=wrong;`, { onError: (e) => void errors.push(e) })
    await bad.send(text('out'))
    const e = await rejection(bad.flush())
    expect(e.code).toBe('SF_AUTH_REJECTED')
    expect(e.message).toMatch(
      /rejected authentication \(HTTP 401: missing or wrong bearer token\); set token=/,
    )
    expect(bad.counters().lastTerminalError).toBe(e)
    expect(h.got.map((g) => g.text)).toEqual(['in'])
  })

  it('connects over wss with tls_roots, or with tls_verify=unsafe_off', async () => {
    const cert = makeSelfSignedCertificate()
    cleanups.push(cert.cleanup)
    const h = await harness({ tls: { key: cert.key, cert: cert.cert } })
    const verified = await open(`wss::addr=${h.addr};tls_roots=${cert.certPath};sender_id=v;`)
    await verified.send(text('v'))
    await verified.flush()
    const unverified = await open(`wss::addr=${h.addr};tls_verify=unsafe_off;sender_id=u;`)
    await unverified.send(text('u'))
    await unverified.flush()
    expect(h.got.map((g) => g.text).sort()).toEqual(['u', 'v'])
  })

  it('stops with SF_RECEIVER_FRAME_LIMIT when a record exceeds what the receiver accepts', async () => {
    const h = await harness({ maxFrameBytes: 1024 })
    const sender = await open(`ws::addr=${h.addr};`)
    await sender.send(text('small'))
    await sender.send(Buffer.alloc(2000))
    const e = await rejection(sender.flush())
    expect(e.code).toBe('SF_RECEIVER_FRAME_LIMIT')
    expect(e.message).toMatch(
      /record FSN 2 needs a 2017-byte frame but the receiver accepts at most 1024 bytes/,
    )
    await waitUntil(() => h.got.length > 0)
    expect(h.got.map((g) => g.text)).toEqual(['small'])
  })

  it('closes with a protocol error when the receiver acks an FSN that was never written', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: () => SUBPROTOCOL })
    await new Promise((resolve) => wss.once('listening', resolve))
    const { port } = wss.address() as AddressInfo
    cleanups.push(() => new Promise((resolve) => wss.close(resolve)))
    const closes: number[] = []
    wss.on('connection', (ws) => {
      ws.on('close', (code) => closes.push(code))
      ws.once('message', () => {
        ws.send(encodeWelcome(1 << 20))
        ws.send(encodeAck(99n))
      })
    })
    const sender = await open(`ws::addr=127.0.0.1:${port};`)
    await sender.send(text('a'))
    const e = await rejection(sender.flush())
    expect(e.code).toBe('SF_PROTOCOL_VIOLATION')
    expect(e.message).toMatch(/receiver acknowledged FSN 99, beyond the last FSN written \(1\)/)
    await waitUntil(() => closes.length === 1)
    expect(closes).toEqual([1002])
  })

  it('refuses a second sender on the same slot and fails fast on a bad connect string', async () => {
    const h = await harness()
    await open(`ws::addr=${h.addr};sf_dir=${h.sfDir};sender_id=one;`)
    await expect(
      Sender.fromConfig(`ws::addr=${h.addr};sf_dir=${h.sfDir};sender_id=one;`),
    ).rejects.toMatchObject({
      code: 'SF_SLOT_LOCKED',
    })
    await expect(Sender.fromConfig(`ws::addr=${h.addr};sf_max_total_bytes=lots;`)).rejects.toMatchObject({
      code: 'SF_CONFIG_INVALID',
      message: 'sender config: sf_max_total_bytes: expected a positive integer, got "lots"',
    })
  })

  it('refuses use after close', async () => {
    const h = await harness()
    const sender = await open(`ws::addr=${h.addr};`)
    await sender.close()
    await expect(sender.send(text('x'))).rejects.toMatchObject({ code: 'SF_SENDER_CLOSED' })
  })
})
