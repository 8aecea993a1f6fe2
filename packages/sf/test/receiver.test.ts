import { afterEach, describe, expect, it } from 'vitest'
import { HaltSenderError } from '../src/errors.js'
import { createReceiver, type Receiver, type ReceiverOptions } from '../src/receiver.js'
import { encodeData, encodeHello } from '../src/wire.js'
import { connectRaw, helloRaw, type RawClient } from './support/raw-client.js'
import { makeSelfSignedCertificate } from './support/tls.js'

const b = (s: string): Buffer => Buffer.from(s)
const open: Array<{ close(): Promise<void> }> = []

afterEach(async () => {
  for (const r of open.splice(0)) await r.close()
})

async function receiver(extra: Partial<ReceiverOptions> = {}) {
  const delivered: Array<[string, bigint, string]> = []
  const errors: Array<{ code: string; message: string }> = []
  const r = await createReceiver({
    port: 0,
    onFrames: ({ senderId, frames }) => {
      for (const f of frames) delivered.push([senderId, f.fsn, Buffer.from(f.payload).toString()])
      return undefined
    },
    onError: (e) => errors.push(e as unknown as { code: string; message: string }),
    ...extra,
  })
  open.push(r)
  return { r, delivered, errors }
}

async function client(r: Receiver, senderId = 's1', durableAck = false): Promise<RawClient> {
  const c = await connectRaw(r.url)
  open.push({ close: async () => void c.ws.terminate() })
  await helloRaw(c, senderId, durableAck)
  return c
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

describe('receiver', () => {
  it('acks a batch only after onFrames resolves', async () => {
    const gate = deferred()
    const seen: bigint[] = []
    const { r } = await receiver({
      onFrames: async ({ frames }) => {
        seen.push(...frames.map((f) => f.fsn))
        await gate.promise
        return undefined
      },
    })
    const c = await client(r)
    c.ws.send(encodeData(1n, [b('a'), b('b')]))
    await expect.poll(() => seen).toEqual([1n, 2n])
    await new Promise((res) => setTimeout(res, 100))
    expect(c.messages.filter((m) => m.type === 'ack')).toEqual([])
    gate.resolve()
    expect(await c.waitFor((m) => m.type === 'ack')).toEqual({ type: 'ack', fsn: 2n })
  })

  it('delivers a replayed frame at most once per sender, and acks duplicates', async () => {
    const { r, delivered } = await receiver()
    const first = await client(r, 's1')
    first.ws.send(encodeData(1n, [b('a'), b('b'), b('c')]))
    await first.waitFor((m) => m.type === 'ack' && m.fsn === 3n)
    first.ws.close()
    const again = await client(r, 's1')
    again.ws.send(encodeData(2n, [b('b'), b('c'), b('d')]))
    await again.waitFor((m) => m.type === 'ack' && m.fsn === 4n)
    const other = await client(r, 's2')
    other.ws.send(encodeData(1n, [b('x')]))
    await other.waitFor((m) => m.type === 'ack' && m.fsn === 1n)
    expect(delivered).toEqual([
      ['s1', 1n, 'a'],
      ['s1', 2n, 'b'],
      ['s1', 3n, 'c'],
      ['s1', 4n, 'd'],
      ['s2', 1n, 'x'],
    ])
  })

  it('seeds dedup from the application through delivered()', async () => {
    const { r, delivered } = await receiver({ delivered: (id) => (id === 's1' ? 2n : 0n) })
    const c = await client(r, 's1')
    c.ws.send(encodeData(1n, [b('a'), b('b'), b('c')]))
    await c.waitFor((m) => m.type === 'ack' && m.fsn === 3n)
    expect(delivered).toEqual([['s1', 3n, 'c']])
  })

  it('forgets an idle sender after forgetSendersAfterMs, never a connected one; delivered() keeps dedup exact', async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
    const held = new Map<string, bigint>() // what an application persisting its input would know
    const seededFsns: bigint[] = []
    const bare = await receiver({ forgetSendersAfterMs: 100 })
    const seeded = await receiver({
      forgetSendersAfterMs: 100,
      delivered: (id) => held.get(id) ?? 0n,
      onFrames: ({ senderId, frames }) => {
        for (const f of frames) seededFsns.push(f.fsn)
        held.set(senderId, frames.at(-1)!.fsn)
        return undefined
      },
    })
    for (const { r } of [bare, seeded]) {
      const c = await client(r, 's1')
      c.ws.send(encodeData(1n, [b('a'), b('b')]))
      await c.waitFor((m) => m.type === 'ack' && m.fsn === 2n)
      await sleep(250) // connected all along: remembered
      c.ws.send(encodeData(2n, [b('b')]))
      await c.waitFor((m) => m.type === 'ack' && m.fsn === 2n)
      c.ws.close()
      await sleep(250) // idle: forgotten
      const again = await client(r, 's1')
      again.ws.send(encodeData(2n, [b('b'), b('c')]))
      await again.waitFor((m) => m.type === 'ack' && m.fsn === 3n)
    }
    expect(bare.delivered.map(([, fsn]) => fsn)).toEqual([1n, 2n, 2n, 3n]) // 'b' again after forgetting
    expect(seededFsns).toEqual([1n, 2n, 3n])
  })

  it('closes a superseded connection of the same sender', async () => {
    const { r } = await receiver()
    const old = await client(r, 's1')
    await client(r, 's1')
    expect(await old.closed).toEqual({
      code: 4000,
      reason: 'superseded by a newer connection of the same sender',
    })
  })

  it('reports DROP outcomes as error frames and still acks past them', async () => {
    const { r } = await receiver({
      onFrames: ({ frames }) => ({
        drop: frames.filter((f) => f.fsn === 2n).map((f) => ({ fsn: f.fsn, reason: 'bad row' })),
      }),
    })
    const c = await client(r)
    c.ws.send(encodeData(1n, [b('a'), b('b'), b('c')]))
    await c.waitFor((m) => m.type === 'ack')
    expect(c.messages.slice(1)).toEqual([
      { type: 'error', category: 'DROP', fsn: 2n, message: 'bad row' },
      { type: 'ack', fsn: 3n },
    ])
  })

  it('halts the sender when onFrames throws HaltSenderError, without acking', async () => {
    const { r } = await receiver({
      onFrames: () => {
        throw new HaltSenderError('table dropped')
      },
    })
    const c = await client(r)
    c.ws.send(encodeData(1n, [b('a')]))
    expect(await c.closed).toMatchObject({ code: 4001 })
    expect(c.messages.slice(1)).toEqual([
      { type: 'error', category: 'HALT', fsn: 1n, message: 'table dropped' },
    ])
  })

  it('closes with 1011 when onFrames fails, and delivers the frames again on the next connection', async () => {
    let calls = 0
    const seen: bigint[] = []
    const { r, errors } = await receiver({
      onFrames: ({ frames }) => {
        if (calls++ === 0) throw new Error('disk busy')
        seen.push(...frames.map((f) => f.fsn))
        return undefined
      },
    })
    const c = await client(r)
    c.ws.send(encodeData(1n, [b('a')]))
    expect((await c.closed).code).toBe(1011)
    expect(errors.map((e) => e.message)).toEqual(['disk busy'])
    const again = await client(r)
    again.ws.send(encodeData(1n, [b('a')]))
    await again.waitFor((m) => m.type === 'ack' && m.fsn === 1n)
    expect(seen).toEqual([1n])
  })

  it('sends durable acks with each ack when asked, or when the application marks durability', async () => {
    const auto = await receiver()
    const c = await client(auto.r, 's1', true)
    c.ws.send(encodeData(1n, [b('a')]))
    expect(await c.waitFor((m) => m.type === 'durableAck')).toEqual({ type: 'durableAck', fsn: 1n })

    const manual = await receiver({ durableAck: 'manual' })
    const m = await client(manual.r, 's1', true)
    m.ws.send(encodeData(1n, [b('a'), b('b')]))
    await m.waitFor((msg) => msg.type === 'ack' && msg.fsn === 2n)
    expect(m.messages.some((msg) => msg.type === 'durableAck')).toBe(false)
    manual.r.markDurable('s1', 1n)
    expect(await m.waitFor((msg) => msg.type === 'durableAck')).toEqual({ type: 'durableAck', fsn: 1n })
  })

  it('holds back a durable ack marked before WELCOME; the replay after it carries it', async () => {
    // A restarted application seeds dedup slowly and meanwhile confirms landings with markDurable.
    const seeded = deferred()
    const { r } = await receiver({
      durableAck: 'manual',
      delivered: async () => {
        await seeded.promise
        return 3n
      },
    })
    const c = await connectRaw(r.url)
    open.push({ close: async () => void c.ws.terminate() })
    c.ws.send(encodeHello('s1', true))
    await new Promise((res) => setTimeout(res, 50)) // HELLO handled, delivered() pending
    r.markDurable('s1', 2n)
    seeded.resolve()
    await c.waitFor((m) => m.type === 'welcome')
    c.ws.send(encodeData(1n, [b('a'), b('b'), b('c'), b('d')]))
    await c.waitFor((m) => m.type === 'durableAck')
    expect(c.messages).toEqual([
      { type: 'welcome', maxFrameBytes: 16 * 1024 * 1024 },
      { type: 'ack', fsn: 4n },
      { type: 'durableAck', fsn: 2n },
    ])
  })

  it.each([
    ['DATA before HELLO', (c: RawClient) => c.ws.send(encodeData(1n, [b('a')])), false, /DATA before HELLO/],
    [
      'FSNs going backwards',
      (c: RawClient) => {
        c.ws.send(encodeData(1n, [b('a'), b('b')]))
        c.ws.send(encodeData(2n, [b('b')]))
      },
      true,
      /DATA starts at FSN 2, below the next expected FSN 3/,
    ],
    ['a malformed message', (c: RawClient) => c.ws.send(Buffer.from([0x02, 0x00])), true, /malformed/],
    ['a text message', (c: RawClient) => c.ws.send('hello'), true, /text message/],
  ])('closes the connection with 1002 on %s and reports it', async (_what, misbehave, hello, pattern) => {
    const { r, errors } = await receiver()
    const c = await connectRaw(r.url)
    if (hello) await helloRaw(c, 's1')
    misbehave(c)
    const closed = await c.closed
    expect(closed.code).toBe(1002)
    expect(closed.reason).toMatch(pattern)
    expect(errors[0]?.code).toBe('SF_PROTOCOL_VIOLATION')
    expect(errors[0]?.message).toMatch(pattern)
  })

  it('enforces maxFrameBytes with close code 1009', async () => {
    const { r, errors, delivered } = await receiver({ maxFrameBytes: 1024 })
    const c = await client(r)
    c.ws.send(encodeData(1n, [Buffer.alloc(2000)]))
    expect((await c.closed).code).toBe(1009)
    expect(delivered).toEqual([])
    await expect.poll(() => errors[0]?.message).toMatch(/larger than maxFrameBytes \(1024\)/)
  })

  it('requires the bearer token and the protocol version in the upgrade', async () => {
    const { r } = await receiver({ token: 'sesame' })
    await expect(connectRaw(r.url)).rejects.toMatchObject({ status: 401 })
    await expect(connectRaw(r.url, { token: 'wrong' })).rejects.toMatchObject({ status: 401 })
    await expect(connectRaw(r.url, { token: 'sesame', protocol: 'skippr-sf.v0' })).rejects.toMatchObject({
      status: 426,
      message: expect.stringMatching(/speaks skippr-sf\.v2, skippr-sf\.v1/),
    })
    const c = await connectRaw(r.url, { token: 'sesame' })
    await helloRaw(c, 's1')
    c.ws.close()
  })

  it('serves wss with a certificate', async () => {
    const cert = makeSelfSignedCertificate()
    try {
      const { r, delivered } = await receiver({ tls: { key: cert.key, cert: cert.cert } })
      expect(r.url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+$/)
      const c = await connectRaw(r.url, { ca: cert.cert })
      await helloRaw(c, 's1')
      c.ws.send(encodeData(1n, [b('secret')]))
      await c.waitFor((m) => m.type === 'ack')
      expect(delivered).toEqual([['s1', 1n, 'secret']])
      c.ws.close()
    } finally {
      cert.cleanup()
    }
  })
})
