/** Helpers for the sender and receiver tests: a recording receiver, free ports, polling. */
import net from 'node:net'
import { createReceiver, type Receiver, type ReceiverOptions } from '../../src/receiver.js'

export interface Recorded {
  senderId: string
  fsn: bigint
  text: string
}

/** A receiver on a free port that records every delivered frame (payloads as UTF-8). */
export async function recordingReceiver(
  extra: Partial<ReceiverOptions> = {},
): Promise<{ receiver: Receiver; got: Recorded[]; addr: string; of(senderId: string): string[] }> {
  const got: Recorded[] = []
  const receiver = await createReceiver({
    port: 0,
    onFrames: ({ senderId, frames }) => {
      for (const f of frames) got.push({ senderId, fsn: f.fsn, text: Buffer.from(f.payload).toString() })
      return undefined
    },
    onError: () => {},
    ...extra,
  })
  return {
    receiver,
    got,
    addr: `127.0.0.1:${receiver.port}`,
    of: (senderId) => got.filter((r) => r.senderId === senderId).map((r) => r.text),
  }
}

/**
 * A port where connections are accepted and dropped at once: a receiver that is down. The port stays
 * bound until `close()`, so no other test (or a concurrent run) can start a receiver on it meanwhile.
 */
export async function downPort(): Promise<{ port: number; close(): Promise<void> }> {
  const server = net.createServer((socket) => socket.destroy())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** A port nothing listens on (bound, then released), for a receiver started on it later. */
export async function freePort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

export async function waitUntil(check: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

export const text = (s: string): Buffer => Buffer.from(s)

/** Catches a rejection and returns it (fails the test if the promise resolves). */
export async function rejection(
  promise: Promise<unknown>,
): Promise<Error & { code: string; [k: string]: unknown }> {
  try {
    await promise
  } catch (e) {
    return e as Error & { code: string; [k: string]: unknown }
  }
  throw new Error('expected a rejection')
}
