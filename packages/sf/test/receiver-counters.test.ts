/** `receiver.counters()`: sessions, connected senders, frames received and replayed, error frames sent. */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { HaltSenderError } from '../src/errors.js'
import { createReceiver } from '../src/receiver.js'
import { encodeData } from '../src/wire.js'
import { connectRaw, helloRaw } from './support/raw-client.js'

const b = (s: string): Buffer => Buffer.from(s)
const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

describe('receiver counters', () => {
  it('count what the senders sent, what was a replay, and the DROP and HALT frames sent', async () => {
    const r = await createReceiver({
      port: 0,
      onFrames: ({ frames }) => {
        if (frames.some((f) => f.payload.toString() === 'halt')) throw new HaltSenderError('stop')
        return {
          drop: frames
            .filter((f) => f.payload.toString() === 'bad')
            .map((f) => ({ fsn: f.fsn, reason: 'bad' })),
        }
      },
      onError: () => {},
    })
    cleanups.push(() => r.close())
    const client = async (senderId: string) => {
      const c = await connectRaw(r.url)
      cleanups.push(() => c.ws.terminate())
      await helloRaw(c, senderId)
      return c
    }
    const first = await client('s1')
    first.ws.send(encodeData(1n, [b('a'), b('bad'), b('c')]))
    await first.waitFor((m) => m.type === 'ack' && m.fsn === 3n)
    expect(r.counters()).toEqual({
      sendersConnected: 1,
      sessionsOpened: 1,
      framesReceived: 3,
      framesReplayed: 0,
      errorsSent: { HALT: 0, DROP: 1 },
    })
    first.ws.close()
    await first.closed
    await vi.waitFor(() => expect(r.counters().sendersConnected).toBe(0))

    const again = await client('s1')
    again.ws.send(encodeData(2n, [b('bad'), b('c'), b('d')]))
    await again.waitFor((m) => m.type === 'ack' && m.fsn === 4n)
    const other = await client('s2')
    other.ws.send(encodeData(1n, [b('halt')]))
    await other.closed
    await vi.waitFor(() =>
      expect(r.counters()).toEqual({
        sendersConnected: 1,
        sessionsOpened: 3,
        framesReceived: 7,
        framesReplayed: 2,
        errorsSent: { HALT: 1, DROP: 1 },
      }),
    )
  })
})
