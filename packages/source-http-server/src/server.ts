/**
 * The HttpServer source: clients POST records; a request's rows join the current commit window
 * and its answer waits for the WAL commit holding them (push-source's `PushQueue`). Requests with an
 * Idempotency-Key already committed (this run or, through the offset, an earlier one) are answered
 * 200 and append nothing; one whose request is still pending waits for that commit.
 */

import { timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type {
  CommitWindow,
  ConnectorContext,
  NamespaceSchema,
  ReadOptions,
  Source,
  SourceChunk,
  SourceOffset,
} from '@skippr/connector-api'
import { decodePayload, PushQueue, parsePushOffset } from '@skippr/push-source'
import { type Answer, committed, failed, tooLarge, unauthorized, walFull } from './answer.js'
import type { HttpServerConfig } from './config.js'
import { IdempotencyKeys, type KeyState, MAX_KEY_LENGTH } from './keys.js'
import { closeListener, openListener, send, tlsOptions } from './listener.js'
import { HttpServerMetrics } from './metrics.js'

const NAMESPACE = /^[A-Za-z_][A-Za-z0-9_]*$/

export class HttpServerSource implements Source {
  readonly commitWindow: CommitWindow
  private readonly queue: PushQueue<KeyState>
  private keys: IdempotencyKeys
  private server: Server | undefined
  private readonly token: Buffer | undefined
  /** The WAL is at its cap (`walFull`): new requests are answered 429 until a commit goes through. */
  private refusing = false
  private readonly metrics = new HttpServerMetrics()

  constructor(
    private readonly config: HttpServerConfig,
    private readonly context: ConnectorContext,
  ) {
    this.commitWindow = { maxDelayMs: config.commit_interval_ms }
    this.queue = new PushQueue({ maxPendingBytes: config.max_pending_bytes })
    this.keys = this.newKeys([])
    this.token = config.token === undefined ? undefined : Buffer.from(`Bearer ${config.token}`)
    if (context.meter) this.metrics.publish(context.meter)
  }

  /** A push source holds no data of its own: its namespaces appear with the first requests. */
  async discover(): Promise<NamespaceSchema[]> {
    return []
  }

  /** Serves until the run stops; the keys committed before a restart come back with `from`. */
  async *read(from: SourceOffset | undefined, options: ReadOptions): AsyncGenerator<SourceChunk> {
    const resumed = parsePushOffset<KeyState>(from)
    this.keys = this.newKeys(resumed?.state ?? [])
    const chunks = this.queue.chunks(resumed, options.signal)
    // The queue must be read before requests are taken: its first step numbers on from `from`.
    const first = chunks.next()
    await this.listen()
    const next = await first
    if (next.done) return
    yield next.value
    yield* chunks
  }

  /** The TLS files can be read (`skipprd doctor`); the port is taken only by the sync. */
  async check(): Promise<void> {
    tlsOptions(this.config, this.context.configDir)
  }

  committed(offset: SourceOffset): void {
    this.queue.committed(offset)
  }

  walFull(full: boolean): void {
    this.refusing = full
  }

  async close(): Promise<void> {
    // Requests still waiting were taken into a batch whose commit never happened (the run failed).
    const server = this.server
    this.server = undefined
    this.queue.close('failed')
    if (server) await closeListener(server)
  }

  private newKeys(state: KeyState): IdempotencyKeys {
    return new IdempotencyKeys(
      { windowMs: this.config.idempotency_window_seconds * 1000, maxKeys: this.config.idempotency_max_keys },
      state,
    )
  }

  private async listen(): Promise<void> {
    const handler = (request: IncomingMessage, response: ServerResponse) => {
      const reply = (answer: Answer) => {
        this.metrics.answered(answer.status)
        send(response, answer, this.server === undefined)
      }
      this.handle(request).then(reply, (error: unknown) => reply(failed(error)))
    }
    this.server = await openListener(this.config, this.context.configDir, handler)
    this.context.logger.info('HttpServer listening', {
      listen: this.config.listen,
      tls: Boolean(this.config.tls_cert && this.config.tls_key),
    })
  }

  private async handle(request: IncomingMessage): Promise<Answer> {
    if (request.method !== 'POST')
      return { status: 405, body: { error: 'only POST' }, headers: { allow: 'POST' } }
    if (!this.authorized(request.headers.authorization)) return unauthorized
    const namespace = this.namespaceOf(request.url ?? '/')
    if (namespace === undefined)
      return {
        status: 404,
        body: { error: this.config.namespace ? `POST / or /${this.config.namespace}` : 'POST /<namespace>' },
      }
    const body = await readBody(request, this.config.max_request_bytes)
    if (body === undefined) return tooLarge(this.config.max_request_bytes)
    this.metrics.received(body.length)
    const key = request.headers['idempotency-key']
    const idempotencyKey = typeof key === 'string' && key.length > 0 ? key : undefined
    if (idempotencyKey !== undefined && idempotencyKey.length > MAX_KEY_LENGTH)
      return {
        status: 400,
        body: { error: `the Idempotency-Key is longer than ${MAX_KEY_LENGTH} characters` },
      }
    const now = Date.now()
    if (idempotencyKey !== undefined) {
      const earlier = this.keys.outcome(idempotencyKey, now)
      if (earlier) return committed(await earlier, true)
    }
    if (this.refusing) {
      this.metrics.refusedWalFull()
      return walFull
    }
    const decoded = decodePayload(body, this.config.format)
    const started = idempotencyKey === undefined ? undefined : this.keys.begin(idempotencyKey, now)
    try {
      await this.queue.push({ namespace, decoded, state: this.keys.state(now) })
      started?.done(decoded.rows)
      this.metrics.accepted(decoded.rows)
      return committed(decoded.rows)
    } catch (error) {
      started?.fail(error)
      throw error
    }
  }

  private authorized(header: string | undefined): boolean {
    if (this.token === undefined) return true
    const sent = Buffer.from(header ?? '')
    return sent.length === this.token.length && timingSafeEqual(sent, this.token)
  }

  private namespaceOf(url: string): string | undefined {
    let path: string
    try {
      path = decodeURIComponent(new URL(url, 'http://x').pathname.replace(/^\/+|\/+$/g, ''))
    } catch {
      return undefined // not a path a namespace could have
    }
    const configured = this.config.namespace
    if (configured !== undefined) return path === '' || path === configured ? configured : undefined
    return NAMESPACE.test(path) ? path : undefined
  }
}

/** The body, or undefined once it passes `max` bytes (the rest is not read: the answer closes the connection). */
async function readBody(request: IncomingMessage, max: number): Promise<Uint8Array | undefined> {
  if (Number(request.headers['content-length'] ?? 0) > max) return undefined
  const pieces: Buffer[] = []
  let size = 0
  for await (const piece of request as AsyncIterable<Buffer>) {
    size += piece.length
    if (size > max) return undefined
    pieces.push(piece)
  }
  return Buffer.concat(pieces)
}

/** `last`: the server is closing, so the connection closes after this answer. */
