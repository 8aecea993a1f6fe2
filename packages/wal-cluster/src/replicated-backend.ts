/**
 * WAL_STORAGE=clustered, the leader's side: a WalBackend over the local disk backend (the same files
 * as WAL_STORAGE=disk, plus the cluster record, cluster-record.ts) whose frames are also streamed to
 * every configured peer (peer-link.ts).
 *
 * Invariants:
 *  1. append() resolves with an FSN only once the frame is durable in the local log AND at least one
 *     peer confirmed, in its current session, every frame up to it durable. A peer that is down,
 *     catching up or refused counts for nothing; the frame waits, never settles for one copy.
 *  2. A frame waits at most `commitTimeoutMs`; then append() fails with WAL_CLUSTER_NO_PEER (or at once
 *     with WAL_CLUSTER_REFUSED when every peer refused this leader), and every later call does too until
 *     the log is reopened: the frame is in the local log already, so a commit retried in this run would
 *     store its batch twice; after a reopen the WAL takes it as committed, like a frame a crash left.
 *  3. Every frame is stored on a peer at the leader's FSN (the batch identity is the FSN), and a peer
 *     never holds a frame at an FSN with other bytes than the leader's (peer-copy.ts).
 *  4. ack() moves the local watermark, then tells the peers (LANDED); writeMeta() returns once the
 *     record is durable locally and on a peer; clear() starts a new log generation on both.
 */
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { Payload } from '@skippr/sf/slot'
import {
  type BackendOptions,
  diskWal,
  type WalBackend,
  type WalBackendType,
  WalClosedError,
  type WalError,
  type WalFrame,
  type WalMeta,
} from '@skippr/wal'
import { readRecord, recordPath, writeRecord } from './cluster-record.js'
import { configError, noPeerError, refusedError } from './errors.js'
import { type LinkSource, PeerLink } from './peer-link.js'

export interface ClusteredWalOptions {
  /** The peers' URLs (`ws://host:port`, as startWalPeer() reports); at least one. */
  readonly peers: readonly string[]
  /** The bearer token the peers expect. */
  readonly secret: string
  /** This leader's writer-lease fencing token: peers refuse it once they saw a newer one. */
  readonly fencingToken: bigint
  /** Names this leader to the peers (default `<host name>:<pid>`). */
  readonly leaderId?: string
  /** How long a commit waits for a peer to confirm it (default 30 s). */
  readonly commitTimeoutMs?: number
  /** The local storage (default: the disk WAL); tests inject faults here. */
  readonly local?: WalBackendType
}

const DEFAULT_COMMIT_TIMEOUT_MS = 30_000

/** The `clustered` WAL storage: pass it to openWal() as `backend`. */
export function clusteredWal(options: ClusteredWalOptions): WalBackendType {
  if (options.peers.length === 0) throw configError('list at least one peer')
  if (options.secret === '') throw configError('the peer secret must not be empty')
  const local = options.local ?? diskWal
  return {
    name: 'clustered',
    open: (backendOptions) => ReplicatedBackend.open(options, local, backendOptions),
    // Readers read the leader's local copy: it holds every committed frame.
    openSnapshot: (snapshotOptions) => local.openSnapshot(snapshotOptions),
  }
}

interface Waiter {
  /** True once what it waits for is confirmed. */
  readonly done: (links: readonly PeerLink[]) => boolean
  readonly resolve: () => void
  readonly reject: (e: WalError) => void
}

class ReplicatedBackend implements WalBackend, LinkSource {
  readonly location: string
  readonly maxFrameBytes: number
  readonly pipeline: string
  readonly leaderId: string
  readonly token: bigint
  readonly bytesPerFile: number
  meta: { version: number; meta: WalMeta } | undefined
  private readonly links: PeerLink[]
  /** Payloads appended and not yet confirmed, so the links need not read them back. */
  private readonly recent = new Map<bigint, Payload>()
  private readonly waiters = new Set<Waiter>()
  private failed: WalError | undefined
  private readonly timeoutMs: number

  private constructor(
    options: ClusteredWalOptions,
    backendOptions: BackendOptions,
    private readonly local: WalBackend,
    private readonly recordFile: string,
    public logId: string,
  ) {
    this.location = local.location
    this.maxFrameBytes = local.maxFrameBytes
    this.pipeline = backendOptions.pipeline
    this.leaderId = options.leaderId ?? `${hostname()}:${process.pid}`
    this.token = options.fencingToken
    this.bytesPerFile = backendOptions.bytesPerFile
    this.timeoutMs = options.commitTimeoutMs ?? DEFAULT_COMMIT_TIMEOUT_MS
    this.links = options.peers.map(
      (url) => new PeerLink(url, options.secret, this, () => this.settle(), backendOptions.logger),
    )
  }

  static async open(
    options: ClusteredWalOptions,
    type: WalBackendType,
    backendOptions: BackendOptions,
  ): Promise<ReplicatedBackend> {
    const local = await type.open(backendOptions)
    try {
      const file = recordPath(backendOptions.dataDir, backendOptions.pipeline)
      const record = await readRecord(file)
      if (record.base !== null && record.base !== 0n)
        throw configError(`${file} is a peer's copy; taking a copy over as leader is not supported yet`)
      let logId = record.logId
      if (logId === null) {
        logId = randomUUID()
        await writeRecord(file, { logId, base: 0n, token: options.fencingToken })
      }
      return new ReplicatedBackend(options, backendOptions, local, file, logId)
    } catch (e) {
      await local.close()
      throw e
    }
  }

  get publishedFsn(): bigint {
    return this.local.publishedFsn
  }

  get ackedFsn(): bigint {
    return this.local.ackedFsn
  }

  get oldestFsn(): bigint {
    return this.local.ackedFsn + 1n
  }

  async append(payload: Payload): Promise<bigint> {
    this.assertUsable()
    const fsn = await this.local.append(payload)
    this.recent.set(fsn, payload)
    try {
      for (const link of this.links) link.kick()
      await this.confirmed(`frame ${fsn}`, (links) => links.some((link) => link.durableFsn >= fsn))
      return fsn
    } catch (e) {
      this.failed ??= e as WalError
      throw e
    } finally {
      this.recent.delete(fsn)
    }
  }

  async *frames(fromFsn: bigint): AsyncIterable<{ fsn: bigint; payload: Payload }> {
    let next = fromFsn
    for (let payload = this.recent.get(next); payload !== undefined; payload = this.recent.get(next))
      yield { fsn: next++, payload }
    if (next <= this.local.publishedFsn) yield* this.local.read(next)
  }

  read(fromFsn: bigint): AsyncIterable<WalFrame> {
    return this.local.read(fromFsn)
  }

  ensureRoom(bytes: number): Promise<void> {
    return this.local.ensureRoom(bytes)
  }

  async ack(fsn: bigint): Promise<void> {
    await this.local.ack(fsn)
    for (const link of this.links) link.landed(fsn)
  }

  seal(): Promise<void> {
    return this.local.seal()
  }

  readMeta(): Promise<WalMeta | undefined> {
    return this.local.readMeta()
  }

  async writeMeta(meta: WalMeta): Promise<void> {
    this.assertUsable()
    await this.local.writeMeta(meta)
    const version = (this.meta?.version ?? 0) + 1
    this.meta = { version, meta }
    for (const link of this.links) link.sendMeta()
    await this.confirmed('the WAL metadata', (links) => links.some((link) => link.metaVersion >= version))
  }

  async clear(): Promise<void> {
    this.assertUsable()
    // The new generation first: a crash before the clear leaves old frames under a new logId, which a
    // peer drops and fetches again; the other order could leave new frames under the old logId, which a
    // peer that landed the old ones would skip as landed.
    const logId = randomUUID()
    await writeRecord(this.recordFile, { logId, base: 0n, token: this.token })
    this.logId = logId
    await this.local.clear()
    for (const link of this.links) link.restart()
  }

  async close(): Promise<void> {
    for (const link of this.links) link.close()
    for (const waiter of this.waiters) waiter.reject(new WalClosedError(this.pipeline))
    this.waiters.clear()
    await this.local.close()
  }

  /** Waits until `done` holds for the links, at most the commit timeout. */
  private confirmed(what: string, done: (links: readonly PeerLink[]) => boolean): Promise<void> {
    if (done(this.links)) return Promise.resolve()
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => finish(() => reject(noPeerError(this.pipeline, what, this.timeoutMs, this.peerStates()))),
        this.timeoutMs,
      )
      const finish = (then: () => void) => {
        clearTimeout(timer)
        this.waiters.delete(waiter)
        then()
      }
      const waiter: Waiter = {
        done,
        resolve: () => finish(resolve),
        reject: (e) => finish(() => reject(e)),
      }
      this.waiters.add(waiter)
      this.settle()
    })
  }

  /** A link changed: wake the waiters it satisfies, or fail them all once every peer refused. */
  private settle(): void {
    const refused = this.links.every((link) => link.refused)
    for (const waiter of [...this.waiters]) {
      if (waiter.done(this.links)) waiter.resolve()
      else if (refused) waiter.reject(refusedError(this.pipeline, this.peerStates()))
    }
  }

  private assertUsable(): void {
    if (this.failed !== undefined) throw this.failed
    if (this.links.every((link) => link.refused)) {
      this.failed = refusedError(this.pipeline, this.peerStates())
      throw this.failed
    }
  }

  private peerStates(): string {
    return this.links.map((link) => `${link.url}: ${link.problem}`).join('; ')
  }
}
