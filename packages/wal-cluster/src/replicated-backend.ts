/**
 * WAL_STORAGE=clustered, the leader's side: a WalBackend over the local disk backend (the same files
 * as WAL_STORAGE=disk, plus the cluster record, cluster-record.ts) whose frames are also streamed to
 * every configured peer (peer-link.ts), with the in-sync set in the state store (in-sync-set.ts).
 *
 * Invariants:
 *  1. append() resolves with an FSN only once the frame is durable in the local log AND every member of
 *     the in-sync set (at least one) confirmed, in its current session, every frame up to it durable. So
 *     every member holds every committed frame, and any of them may take over.
 *  2. A member that has not confirmed a frame within `lagLimitMs` is removed from the set by a
 *     conditional write before the leader stops waiting for it; the last member is never removed (it is
 *     the one node a takeover can use), so with no member in sync commits wait. A peer outside the set
 *     that confirmed every committed frame is added back, and waited for from the moment the write starts.
 *  3. A commit waits at most `commitTimeoutMs`; then append() fails with WAL_CLUSTER_NO_PEER (at once
 *     with WAL_CLUSTER_REFUSED when every peer refused this leader, or WAL_CLUSTER_FENCED when the set
 *     was taken by a newer leader), and every later call does too until the log is reopened: the frame
 *     is in the local log already, so a commit retried in this run would store its batch twice. Opening
 *     waits until the members hold every frame the local log holds, as it would treat them as committed.
 *  4. Every frame is stored on a peer at the leader's FSN (the batch identity is the FSN), and a peer
 *     never holds a frame at an FSN with other bytes than the leader's (peer-copy.ts). A leader opened on
 *     a peer's copy (a takeover) keeps its frames at their FSNs (based-log.ts) and continues after them.
 *  5. ack() moves the local watermark, then tells the peers (LANDED); writeMeta() returns once the
 *     record is durable locally and on every member; clear() starts a new log generation on all.
 */
import { randomUUID } from 'node:crypto'
import type { Payload } from '@skippr/sf/slot'
import {
  type BackendOptions,
  diskWal,
  type SnapshotSourceOptions,
  type WalBackend,
  type WalBackendType,
  WalClosedError,
  type WalError,
  type WalFrame,
  type WalMeta,
  type WalSnapshotSource,
} from '@skippr/wal'
import { BasedLog, basedSnapshot } from './based-log.js'
import { readRecord, recordPath, writeRecord } from './cluster-record.js'
import { configError, noPeerError, refusedError } from './errors.js'
import { InSyncSet, type InSyncStore, inSyncKey } from './in-sync-set.js'
import { type LinkSource, PeerLink } from './peer-link.js'

export interface ClusterPeer {
  /** The peer's name in the in-sync set. */
  readonly nodeId: string
  /** `ws://host:port`, as startWalPeer() reports. */
  readonly url: string
}

export interface ClusteredWalOptions {
  /** This node's name in the in-sync set (and to the peers). */
  readonly nodeId: string
  /** The other nodes' peers; at least one. */
  readonly peers: readonly ClusterPeer[]
  /** The bearer token the peers expect. */
  readonly secret: string
  /** This leader's writer-lease fencing token: peers and the in-sync set refuse it once they saw a newer one. */
  readonly fencingToken: bigint
  /** Where the in-sync set lives: the state store's backend. */
  readonly inSync: InSyncStore
  /** The set's key (default inSyncKey(pipeline)). */
  readonly inSyncKey?: string
  /** How long a member may leave a frame unconfirmed before it is removed from the set (default 10 s). */
  readonly lagLimitMs?: number
  /** How long a commit waits for the members to confirm it (default 30 s). */
  readonly commitTimeoutMs?: number
  /** The local storage (default: the disk WAL); tests inject faults here. */
  readonly local?: WalBackendType
}

const DEFAULT_COMMIT_TIMEOUT_MS = 30_000
const DEFAULT_LAG_LIMIT_MS = 10_000

/** The `clustered` WAL storage: pass it to openWal() as `backend`. */
export function clusteredWal(options: ClusteredWalOptions): WalBackendType {
  if (options.peers.length === 0) throw configError('list at least one peer')
  if (options.secret === '') throw configError('the peer secret must not be empty')
  if (options.peers.some((peer) => peer.nodeId === options.nodeId))
    throw configError(`node ${options.nodeId} lists itself as a peer`)
  const local = options.local ?? diskWal
  return {
    name: 'clustered',
    open: (backendOptions) => ReplicatedBackend.open(options, local, backendOptions),
    openSnapshot: (snapshotOptions) => openClusteredSnapshot(snapshotOptions, local),
  }
}

/**
 * A reader's view of the log in this node's data directory, a leader's or a peer's copy (a member's
 * holds every committed frame), at the leader's FSNs; it needs no peer, secret nor set.
 */
export async function openClusteredSnapshot(
  options: SnapshotSourceOptions,
  local: WalBackendType = diskWal,
): Promise<WalSnapshotSource> {
  return basedSnapshot(await local.openSnapshot(options), async () => {
    const record = await readRecord(recordPath(options.dataDir, options.pipeline))
    return record.base ?? 0n
  })
}

interface Waiter {
  /** True once what it waits for is confirmed by `link`. */
  readonly done: (link: PeerLink) => boolean
  /** The frame it commits, if it is one. */
  readonly fsn: bigint | undefined
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
  /** Peers being added to the set: waited for from the moment the write starts. */
  private readonly joining = new Set<string>()
  /** Members being removed: still waited for until the write is done. */
  private readonly leaving = new Set<string>()
  /** The highest FSN a commit returned for (or the local log held at open). */
  private committedFsn: bigint
  private failed: WalError | undefined
  private readonly timeoutMs: number
  private readonly lagLimitMs: number

  private constructor(
    options: ClusteredWalOptions,
    backendOptions: BackendOptions,
    private readonly local: WalBackend,
    private readonly recordFile: string,
    public logId: string,
    private readonly set: InSyncSet,
  ) {
    this.location = local.location
    this.maxFrameBytes = local.maxFrameBytes
    this.pipeline = backendOptions.pipeline
    this.leaderId = options.nodeId
    this.token = options.fencingToken
    this.bytesPerFile = backendOptions.bytesPerFile
    this.timeoutMs = options.commitTimeoutMs ?? DEFAULT_COMMIT_TIMEOUT_MS
    this.lagLimitMs = options.lagLimitMs ?? DEFAULT_LAG_LIMIT_MS
    this.committedFsn = local.publishedFsn
    this.links = options.peers.map(
      (peer) =>
        new PeerLink(peer.nodeId, peer.url, options.secret, this, () => this.settle(), backendOptions.logger),
    )
  }

  /**
   * Claims the in-sync set (a takeover when this node was a member, in-sync-set.ts), then opens the
   * local log: the leader's own, or a peer's copy it continues at the copy's FSNs.
   */
  static async open(
    options: ClusteredWalOptions,
    type: WalBackendType,
    backendOptions: BackendOptions,
  ): Promise<ReplicatedBackend> {
    const key = options.inSyncKey ?? inSyncKey(backendOptions.pipeline)
    const set = await InSyncSet.claim(options.inSync, key, options.nodeId, options.fencingToken)
    const local = await type.open(backendOptions)
    let backend: ReplicatedBackend | undefined
    try {
      const file = recordPath(backendOptions.dataDir, backendOptions.pipeline)
      const record = await readRecord(file)
      if (record.logId !== null && record.base === null)
        throw configError(`${file} is a dropped peer copy: it holds no frames to continue from`)
      const logId = record.logId ?? randomUUID()
      // The token goes into the local record too, so this directory, served as a peer's copy again
      // later, refuses every leader older than this one.
      if (record.logId === null || record.token < options.fencingToken)
        await writeRecord(file, { logId, base: record.base ?? 0n, token: options.fencingToken })
      backend = new ReplicatedBackend(
        options,
        backendOptions,
        new BasedLog(local, record.base ?? 0n),
        file,
        logId,
        set,
      )
      await backend.holdEverywhere()
      return backend
    } catch (e) {
      if (backend !== undefined) await backend.close()
      else await local.close()
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
      await this.confirmed(`frame ${fsn}`, (link) => link.durableFsn >= fsn, fsn)
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
    await this.confirmed('the WAL metadata', (link) => link.metaVersion >= version)
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

  /** Frames a crash left in the local log count as committed once open: they must be on the members too. */
  private async holdEverywhere(): Promise<void> {
    const held = this.local.publishedFsn
    if (held > this.local.ackedFsn)
      await this.confirmed(`frames up to ${held}`, (link) => link.durableFsn >= held, held)
  }

  /**
   * Waits until every member (at least one) and every joining peer confirmed what `done` checks, at most
   * the commit timeout; every `lagLimitMs` meanwhile, the members that have not are removed.
   */
  private confirmed(what: string, done: (link: PeerLink) => boolean, fsn?: bigint): Promise<void> {
    if (this.confirmedByAll(done)) {
      this.committed(fsn)
      return Promise.resolve()
    }
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => finish(() => reject(noPeerError(this.pipeline, what, this.timeoutMs, this.peerStates()))),
        this.timeoutMs,
      )
      const lag = setInterval(() => this.dropLaggards(done), this.lagLimitMs)
      const finish = (then: () => void) => {
        clearTimeout(timer)
        clearInterval(lag)
        this.waiters.delete(waiter)
        then()
      }
      const waiter: Waiter = {
        done,
        fsn,
        resolve: () => finish(resolve),
        reject: (e) => finish(() => reject(e)),
      }
      this.waiters.add(waiter)
      this.settle()
    })
  }

  private confirmedByAll(done: (link: PeerLink) => boolean): boolean {
    if (this.set.members.length === 0) return false
    for (const nodeId of [...this.set.members, ...this.joining]) {
      const link = this.links.find((l) => l.nodeId === nodeId)
      if (link === undefined || !done(link)) return false
    }
    return true
  }

  /** Called as a commit is confirmed, before anything else runs: a peer is added only if it holds it. */
  private committed(fsn: bigint | undefined): void {
    if (fsn !== undefined && fsn > this.committedFsn) this.committedFsn = fsn
  }

  /**
   * A link or the set changed: wake the waiters it satisfies, fail them all once every peer refused,
   * and add back the peers that hold every committed frame.
   */
  private settle(): void {
    const refused = this.links.every((link) => link.refused)
    for (const waiter of [...this.waiters]) {
      if (this.confirmedByAll(waiter.done)) {
        this.committed(waiter.fsn)
        waiter.resolve()
      } else if (refused) waiter.reject(refusedError(this.pipeline, this.peerStates()))
    }
    this.admit()
  }

  /** Invariant 2, adding: a confirmed peer outside the set that holds every committed frame and the meta. */
  private admit(): void {
    if (this.failed !== undefined) return
    const metaVersion = this.meta?.version ?? 0
    for (const link of this.links) {
      const id = link.nodeId
      if (this.set.members.includes(id) || this.joining.has(id) || !link.confirmed) continue
      if (link.durableFsn < this.committedFsn || link.metaVersion < metaVersion) continue
      this.joining.add(id)
      this.changeSet(this.set.add(id), () => this.joining.delete(id))
    }
  }

  /** Invariant 2, removing: the members behind, but never the last one (the best placed stays). */
  private dropLaggards(done: (link: PeerLink) => boolean): void {
    const members = this.set.members.filter((id) => !this.leaving.has(id))
    const behind = members.filter((id) => {
      const link = this.links.find((l) => l.nodeId === id)
      return link === undefined || !done(link)
    })
    if (behind.length === members.length) {
      const durable = (id: string) => this.links.find((l) => l.nodeId === id)?.durableFsn ?? -1n
      behind.sort((a, b) => (durable(a) > durable(b) ? -1 : durable(a) < durable(b) ? 1 : 0)).shift()
    }
    for (const id of behind) {
      this.leaving.add(id)
      this.changeSet(this.set.remove(id), () => this.leaving.delete(id))
    }
  }

  /** After a set write: re-check the waiters; a refused write means a newer leader took over. */
  private changeSet(write: Promise<void>, after: () => void): void {
    write.then(
      () => {
        after()
        this.settle()
      },
      (e: WalError) => {
        after()
        this.failed ??= e
        for (const waiter of [...this.waiters]) waiter.reject(e)
      },
    )
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
