/**
 * The peer: a `ws` server that keeps durable copies of leaders' logs (peer-copy.ts), one per pipeline,
 * in its own data directory, laid out as the disk WAL lays out a leader's (`<dataDir>/wal/…`).
 *
 * A connection must carry the shared secret as `Authorization: Bearer …`, else it gets REFUSED
 * `bad-bearer` and is closed. Per pipeline one session is current: the latest HELLO whose fencing token
 * is at least the highest the copy has seen (a newer one displaces an older leader, which gets REFUSED
 * `older-token`; an older one is refused). Frames of any other session are ignored. A message is
 * answered only after the copy did what it says: DURABLE follows the local fsync.
 */
import { timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { SlotLogger } from '@skippr/sf/slot'
import { diskWal, type WalBackendType } from '@skippr/wal'
import { type WebSocket, WebSocketServer } from 'ws'
import { configError } from './errors.js'
import { PeerCopy } from './peer-copy.js'
import {
  type Append,
  decodeMessage,
  encodeMessage,
  type Hello,
  MAX_MESSAGE_BYTES,
  type Message,
  type Meta,
  type Refused,
} from './protocol.js'

export interface WalPeerOptions {
  /** Default 127.0.0.1. */
  readonly host?: string
  /** Default 0: any free port (see `port`). */
  readonly port?: number
  /** Where the copies live: `<dataDir>/wal/`. */
  readonly dataDir: string
  /** The bearer token leaders must present. */
  readonly secret: string
  /** Cap on each copy's files (default 10 GiB). */
  readonly maxTotalBytes?: number
  readonly logger?: SlotLogger
  /** The local storage of the copies (default: the disk WAL); tests inject faults here. */
  readonly storage?: WalBackendType
}

export interface WalPeer {
  /** `ws://host:port`, what a leader's `peers` lists. */
  readonly url: string
  readonly port: number
  /**
   * Stops keeping `pipeline`'s copy, for good: its leader is disconnected, the copy is closed (so this
   * node can open it as the leader's log after a takeover) and every later HELLO for it is refused.
   */
  release(pipeline: string): Promise<void>
  close(): Promise<void>
}

interface Session {
  readonly pipeline: string
  readonly number: number
  readonly copy: PeerCopy
  readonly token: bigint
  durable: bigint
  metaVersion: number
  /** Set after a resync was asked for: nothing but a new HELLO counts. */
  resyncing: boolean
}

const DEFAULT_MAX_TOTAL_BYTES = 10 * 1024 * 1024 * 1024

export async function startWalPeer(options: WalPeerOptions): Promise<WalPeer> {
  if (options.secret === '') throw configError('the peer secret must not be empty')
  const server = new PeerServer(options)
  const wss = new WebSocketServer({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    maxPayload: MAX_MESSAGE_BYTES,
  })
  await new Promise<void>((resolve, reject) => {
    wss.once('listening', resolve)
    wss.once('error', reject)
  })
  wss.on('connection', (ws, request) => server.connect(ws, request))
  const { address, port } = wss.address() as AddressInfo
  return {
    url: `ws://${address}:${port}`,
    port,
    release: (pipeline) => server.release(pipeline),
    async close() {
      for (const client of wss.clients) client.terminate()
      await new Promise<void>((resolve) => wss.close(() => resolve()))
      await server.close()
    },
  }
}

class PeerServer {
  private readonly copies = new Map<string, Promise<PeerCopy>>()
  /** The connection whose session is current, per pipeline. */
  private readonly owners = new Map<string, Connection>()
  /** Pipelines this node leads now: their copies are its logs, no longer a peer's. */
  private readonly released = new Set<string>()
  private readonly logger: SlotLogger | undefined
  private readonly secret: Buffer

  constructor(private readonly options: WalPeerOptions) {
    this.logger = options.logger
    this.secret = Buffer.from(`Bearer ${options.secret}`)
  }

  connect(ws: WebSocket, request: IncomingMessage): void {
    const given = Buffer.from(request.headers.authorization ?? '')
    if (given.length !== this.secret.length || !timingSafeEqual(given, this.secret)) {
      this.logger?.warn(`wal-cluster peer: refused ${request.socket.remoteAddress}: bad bearer token`)
      ws.send(encodeMessage(refusal(0, 'bad-bearer', 'the bearer token is not this peer’s secret')))
      ws.close()
      return
    }
    const connection = new Connection(ws, this)
    ws.on('message', (data: Buffer) => connection.receive(data))
    ws.on('close', () => this.disown(connection))
  }

  copyFor(hello: Hello): Promise<PeerCopy> | undefined {
    if (this.released.has(hello.pipeline)) return undefined
    let copy = this.copies.get(hello.pipeline)
    if (copy === undefined) {
      copy = PeerCopy.open({
        pipeline: hello.pipeline,
        dataDir: this.options.dataDir,
        bytesPerFile: hello.bytesPerFile,
        maxTotalBytes: this.options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES,
        logger: this.logger,
        storage: this.options.storage ?? diskWal,
      })
      this.copies.set(hello.pipeline, copy)
      copy.catch(() => this.copies.delete(hello.pipeline))
    }
    return copy
  }

  /** Makes `connection` the pipeline's current one; the one it displaces is refused if it was older. */
  own(pipeline: string, connection: Connection, token: bigint): void {
    const previous = this.owners.get(pipeline)
    this.owners.set(pipeline, connection)
    if (previous !== undefined && previous !== connection) previous.displaced(token)
  }

  isOwner(pipeline: string, connection: Connection): boolean {
    return this.owners.get(pipeline) === connection
  }

  disown(connection: Connection): void {
    for (const [pipeline, owner] of this.owners) if (owner === connection) this.owners.delete(pipeline)
  }

  async release(pipeline: string): Promise<void> {
    this.released.add(pipeline)
    const copy = this.copies.get(pipeline)
    // After the session that holds it: a frame being made durable is finished first.
    await (await copy?.catch(() => undefined))?.run(async () => {})
    this.owners.get(pipeline)?.displaced(0n)
    this.owners.delete(pipeline)
    await this.discard(pipeline)
  }

  /** After a failed operation the copy is reopened (its storage recovers) by the next session. */
  async discard(pipeline: string): Promise<void> {
    const copy = this.copies.get(pipeline)
    this.copies.delete(pipeline)
    await (await copy?.catch(() => undefined))?.close().catch(() => {})
  }

  fail(where: string, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error)
    ;(this.logger ?? console).error(`wal-cluster peer: ${where}: ${message}`)
  }

  async close(): Promise<void> {
    for (const pipeline of [...this.copies.keys()]) await this.discard(pipeline)
  }
}

class Connection {
  private chain: Promise<void> = Promise.resolve()
  private session: Session | undefined

  constructor(
    private readonly ws: WebSocket,
    private readonly server: PeerServer,
  ) {}

  /** Messages are handled one at a time, in the order they came. */
  receive(data: Buffer): void {
    const message = decodeMessage(data)
    if (typeof message === 'string') {
      this.server.fail('dropped a connection', new Error(message))
      this.ws.terminate()
      return
    }
    this.chain = this.chain.then(() => this.handle(message)).catch((e) => this.broken(e))
  }

  /** A newer leader (or the same one, reconnected) took the pipeline over. */
  displaced(token: bigint): void {
    const session = this.session
    this.session = undefined
    if (session !== undefined && token > session.token)
      this.send(refusal(session.number, 'older-token', `a leader with fencing token ${token} took over`))
    this.ws.close()
  }

  private async handle(message: Message): Promise<void> {
    if (message.type === 'hello') return this.hello(message)
    const session = this.current(message)
    if (session === undefined) return
    if (message.type === 'append') return this.append(session, message)
    if (message.type === 'meta') return this.meta(session, message)
    if (message.type === 'landed') await session.copy.run(() => session.copy.land(message.fsn))
  }

  private async hello(hello: Hello): Promise<void> {
    const opening = this.server.copyFor(hello)
    if (opening === undefined) {
      this.send(refusal(hello.session, 'older-token', `this node leads pipeline ${hello.pipeline} now`))
      this.ws.close()
      return
    }
    const copy = await opening
    const refused = await copy.run(async () => {
      const seen = copy.token
      if (!(await copy.fence(hello.token)))
        return `fencing token ${hello.token} is older than ${seen}, which this peer has seen`
      await copy.begin(hello.logId, hello.oldestFsn, hello.publishedFsn)
      // Inside the copy's chain, so sessions become current in the order their tokens were checked.
      this.session = {
        pipeline: hello.pipeline,
        number: hello.session,
        copy,
        token: hello.token,
        durable: 0n,
        metaVersion: 0,
        resyncing: false,
      }
      this.server.own(hello.pipeline, this, hello.token)
      return undefined
    })
    if (refused !== undefined) this.send(refusal(hello.session, 'older-token', refused))
  }

  private async append(session: Session, append: Append): Promise<void> {
    const accepted = await session.copy.run(() => session.copy.accept(append.fsn, append.payload))
    if (accepted === 'diverged') {
      session.resyncing = true
      this.send(refusal(session.number, 'resync', `frame ${append.fsn} diverged from this peer's copy`))
      return
    }
    session.durable = append.fsn
    this.reportDurable(session)
  }

  private async meta(session: Session, meta: Meta): Promise<void> {
    await session.copy.run(() => session.copy.writeMeta(meta.meta))
    session.metaVersion = meta.version
    this.reportDurable(session)
  }

  private reportDurable(session: Session): void {
    this.send({
      type: 'durable',
      session: session.number,
      fsn: session.durable,
      metaVersion: session.metaVersion,
    })
  }

  /** The session a message belongs to, if it is the current one of its pipeline. */
  private current(message: Exclude<Message, Hello>): Session | undefined {
    const session = this.session
    if (session === undefined || session.resyncing || message.session !== session.number) return undefined
    return this.server.isOwner(session.pipeline, this) ? session : undefined
  }

  private send(message: Message): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(encodeMessage(message))
  }

  private async broken(error: unknown): Promise<void> {
    const pipeline = this.session?.pipeline
    this.server.fail(`pipeline ${pipeline ?? '?'}`, error)
    this.session = undefined
    this.ws.terminate()
    if (pipeline !== undefined) await this.server.discard(pipeline)
  }
}

function refusal(session: number, reason: Refused['reason'], detail: string): Refused {
  return { type: 'refused', session, reason, detail }
}
