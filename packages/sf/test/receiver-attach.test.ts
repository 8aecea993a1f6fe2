/**
 * A receiver attached to an HTTP(S) server the application runs, next to its own routes, and the way an
 * embedding application (a push source committing to its own log) acks only after its commit and dedups
 * replays after a restart.
 */
import { createServer, type Server } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket, WebSocketServer } from 'ws'
import {
  createReceiver,
  type ReceivedBatch,
  type ReceiverAttachOptions,
  type ReceiverBaseOptions,
  type ReceiverOptions,
} from '../src/receiver.js'
import { Sender } from '../src/sender.js'
import { encodeData } from '../src/wire.js'
import { text, waitUntil } from './support/harness.js'
import { tmpSfDir } from './support/helpers.js'
import { connectRaw, helloRaw } from './support/raw-client.js'
import { makeSelfSignedCertificate } from './support/tls.js'

const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** An application's HTTP server: `/health` answers 200, any other request 404, both from its handler. */
async function appServer(server: Server = createServer()): Promise<{ server: Server; port: number }> {
  server.on('request', (req, res) => {
    if (req.url === '/health') res.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('no such route')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { server, port: (server.address() as AddressInfo).port }
}

async function attached(extra: Partial<ReceiverBaseOptions> & Pick<ReceiverAttachOptions, 'server'>) {
  const got: Array<{ senderId: string; fsn: bigint; text: string }> = []
  const receiver = await createReceiver({
    onFrames: ({ senderId, frames }) => {
      for (const f of frames) got.push({ senderId, fsn: f.fsn, text: Buffer.from(f.payload).toString() })
      return undefined
    },
    onError: () => {},
    ...extra,
  })
  cleanups.push(() => receiver.close())
  return { receiver, got }
}

async function openSender(port: number, senderId: string) {
  const sfDir = await tmpSfDir()
  const sender = await Sender.fromConfig(
    `ws::addr=127.0.0.1:${port};sf_dir=${sfDir};sender_id=${senderId};` +
      'reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=50;',
    { onError: () => {} },
  )
  cleanups.push(() => sender.close().catch(() => {}))
  return sender
}

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`)
  return { status: res.status, body: await res.text() }
}

const numbered = (n: number, from = 1): string[] => Array.from({ length: n }, (_, i) => `r${from + i}`)

describe('receiver attached to an existing server', () => {
  it('serves a Sender on its path while the application keeps answering its own requests', async () => {
    const { server, port } = await appServer()
    const { receiver, got } = await attached({ server, path: '/' })
    expect(receiver.url).toBe(`ws://127.0.0.1:${port}/`)
    expect(receiver.port).toBe(port)

    const sender = await openSender(port, 'app')
    for (const r of numbered(100)) await sender.send(text(r))
    await sender.flush()
    expect(sender.ackedFsn).toBe(100n)
    expect(got.map((g) => g.text)).toEqual(numbered(100))
    expect(new Set(got.map((g) => g.senderId))).toEqual(new Set(['app']))

    // Plain requests stay the application's, on another path and on the receiver's own.
    expect(await get(port, '/health')).toEqual({ status: 200, body: 'ok' })
    expect(await get(port, '/')).toEqual({ status: 404, body: 'no such route' })
    // An upgrade for another path, with no other upgrade handler on the server, is refused, not left hanging.
    await expect(connectRaw(`ws://127.0.0.1:${port}/elsewhere`)).rejects.toMatchObject({ status: 404 })

    await sender.close()
    await receiver.close()
    expect(server.listening).toBe(true)
    expect(server.listenerCount('upgrade')).toBe(0)
    expect(await get(port, '/health')).toEqual({ status: 200, body: 'ok' })
  })

  it('leaves upgrades for other paths to the application’s own WebSocket handler', async () => {
    const { server, port } = await appServer()
    const echo = new WebSocketServer({ noServer: true })
    cleanups.push(() => echo.close())
    server.on('upgrade', (req, socket, head) => {
      if (req.url === '/echo')
        echo.handleUpgrade(req, socket, head, (ws) => ws.on('message', (m) => ws.send(m)))
    })
    const { got } = await attached({ server, path: '/' })

    const ws = new WebSocket(`ws://127.0.0.1:${port}/echo`)
    cleanups.push(() => ws.terminate())
    const echoed = new Promise<string>((resolve) => ws.once('message', (m) => resolve(m.toString())))
    ws.once('open', () => ws.send('ping'))
    expect(await echoed).toBe('ping')

    const sender = await openSender(port, 'app')
    await sender.send(text('hello'))
    await sender.flush()
    expect(got.map((g) => g.text)).toEqual(['hello'])
  })

  it('serves wss when the shared server is an https.Server, with the token checked as on its own port', async () => {
    const cert = makeSelfSignedCertificate()
    cleanups.push(() => cert.cleanup())
    const { server, port } = await appServer(createHttpsServer({ key: cert.key, cert: cert.cert }))
    const { receiver, got } = await attached({ server, token: 'sesame' })
    expect(receiver.url).toBe(`wss://127.0.0.1:${port}`)
    await expect(connectRaw(receiver.url, { ca: cert.cert })).rejects.toMatchObject({ status: 401 })
    const c = await connectRaw(receiver.url, { ca: cert.cert, token: 'sesame' })
    cleanups.push(() => c.ws.terminate())
    await helloRaw(c, 's1')
    c.ws.send(encodeData(1n, [text('secret')]))
    await c.waitFor((m) => m.type === 'ack' && m.fsn === 1n)
    expect(got.map((g) => g.text)).toEqual(['secret'])
  })

  it('refuses both a port and a server', async () => {
    const { server } = await appServer()
    await expect(
      createReceiver({ server, port: 0, onFrames: () => undefined } as unknown as ReceiverOptions),
    ).rejects.toThrow(/either `port`.*or `server`/)
    expect(server.listenerCount('upgrade')).toBe(0)
  })
})

describe('embedding application that commits before the ack', () => {
  /**
   * What a push source does: `onFrames` queues the rows for its own commit and resolves when that commit
   * holds them; the committed offset is `{ senderId → last FSN }`, and a restarted process seeds
   * `delivered()` from it.
   */
  function committingApp(committedBefore = new Map<string, bigint>()) {
    const committed = new Map(committedBefore)
    const rows: string[] = []
    const handedOver: bigint[] = []
    const pending: Array<{ batch: ReceivedBatch; done: () => void }> = []
    return {
      committed,
      rows,
      handedOver,
      hasPending: () => pending.length > 0,
      options: {
        delivered: (senderId: string) => committed.get(senderId) ?? 0n,
        onFrames: (batch: ReceivedBatch) =>
          new Promise<undefined>((resolve) => {
            handedOver.push(...batch.frames.map((f) => f.fsn))
            pending.push({ batch, done: () => resolve(undefined) })
          }),
      },
      /** Commits what is pending (rows and offset together); the acks go out only if `ack`. */
      commit(ack = true) {
        for (const { batch, done } of pending.splice(0)) {
          rows.push(...batch.frames.map((f) => Buffer.from(f.payload).toString()))
          committed.set(batch.senderId, batch.frames.at(-1)!.fsn)
          if (ack) done()
        }
      },
    }
  }

  /** Commits batch after batch (one sender has one batch in `onFrames` at a time) until `fsn` is acked. */
  async function commitUntilAcked(app: ReturnType<typeof committingApp>, sender: Sender, fsn: bigint) {
    await waitUntil(
      () => {
        app.commit()
        return sender.ackedFsn === fsn
      },
      5000,
      `ack of FSN ${fsn}`,
    )
  }

  it('acks only after its commit, and after a restart acks replayed committed frames without handing them over', async () => {
    const { server, port } = await appServer()
    const app = committingApp()
    const first = await attached({ server, path: '/', ...app.options })
    const sender = await openSender(port, 'app')
    for (const r of numbered(10)) await sender.send(text(r))
    await waitUntil(app.hasPending, 5000, 'frames handed over')
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(sender.ackedFsn).toBe(0n) // handed over, not committed: no ack
    await commitUntilAcked(app, sender, 10n)

    // Committed, but the process dies before acking: the sender keeps the frames and replays them.
    for (const r of numbered(5, 11)) await sender.send(text(r))
    await waitUntil(app.hasPending, 5000, 'frames handed over')
    app.commit(false)
    const seed = app.committed.get('app')!
    expect(seed).toBeGreaterThan(10n)
    await first.receiver.close()
    expect(sender.ackedFsn).toBe(10n)

    const restarted = committingApp(app.committed)
    await attached({ server, path: '/', ...restarted.options })
    await commitUntilAcked(restarted, sender, 15n)
    // The replay started at FSN 11; what the seed covered was acked, not handed over again.
    expect(restarted.handedOver.every((fsn) => fsn > seed)).toBe(true)
    expect([...app.rows, ...restarted.rows]).toEqual(numbered(15))
  })
})
