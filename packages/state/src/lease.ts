/*
 * The writer lease on one key, with no trust in clocks across hosts (as the DynamoDB lock client
 * and the Kinesis lease table do it):
 * - A waiter takes over a lease it has seen unchanged — the same record version — for the lease's
 *   TTL on its own monotonic clock. Every heartbeat writes the record, so a live holder keeps
 *   changing it. Wall-clock skew between hosts cannot hand the lease over early.
 * - A holder counts its lease valid for the TTL less a margin after the start of its last
 *   successful heartbeat, on its own monotonic clock, and declares it lost past that. A waiter
 *   starts counting only after reading the version that heartbeat wrote, so the holder has stopped
 *   before any waiter takes over (both clocks run at the same rate, which the margin covers).
 * - `heartbeatAt` in the record is wall time for people to read (`skipprd query`); no takeover
 *   depends on it. A released lease, or a holder known to be gone (its process on this host no
 *   longer exists), is taken at once.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { StateBackend, StateEntry } from './backend.js'
import {
  hasCode,
  LEASE_LOST,
  type LeaseHolder,
  LeaseLostError,
  LeaseUnavailableError,
  StaleFenceError,
  type StateError,
} from './errors.js'
import { updateKey } from './update.js'

/** The stored lease. `token` is a decimal string: JSON has no 64-bit integers. */
type LeaseRecord = {
  readonly owner: string
  readonly token: string
  readonly heartbeatAt: number
  readonly ttlMs: number
  readonly released: boolean
}

export interface AcquireLeaseOptions {
  /** Who is writing, for the message a waiting writer sees (e.g. `host:pid`). */
  readonly owner: string
  /** A lease a waiter sees unchanged for this long (its own clock) may be taken over. Default 30 s. */
  readonly ttlMs?: number
  /** How long to wait for a held lease before failing. Default 45 s: more than the TTL (see below). */
  readonly waitMs?: number
  /** How often a waiting writer looks again. Default 250 ms. */
  readonly pollMs?: number
  /** Automatic heartbeat period (an unref'd timer). Default ttlMs / 3; 0 turns it off. */
  readonly heartbeatIntervalMs?: number
  /** Called once when the lease is found lost: taken over, or no successful heartbeat for ttlMs. */
  readonly onLost?: (error: StateError) => void
  /** Called after each successful heartbeat (for a debug line per renewal). */
  readonly onRenewed?: (lease: Lease) => void
  /**
   * Answers true when a live-looking holder is known to be gone (e.g. `isLocalOwnerGone`: its
   * process on this host no longer exists), so the lease is taken over now instead of after ttlMs.
   */
  readonly isHolderGone?: (owner: string) => boolean
  /** Default the system clocks; tests give a process a skewed wall clock. */
  readonly clock?: LeaseClock
  /**
   * What this process has seen of a held lease, kept by the caller between attempts: a process
   * that tries a pipeline now and then without waiting (every-pipeline mode) takes over a dead
   * holder's lease once it has seen it unchanged for the TTL across its attempts.
   */
  readonly watch?: LeaseWatch
  /** Ends a wait for a held lease: the acquisition rejects with the signal's reason. */
  readonly signal?: AbortSignal
}

/** A waiter's view of a held lease: its record version, and when (monotonic) it was first seen. */
export interface LeaseWatch {
  seen?: { readonly version: number; readonly at: number } | undefined
}

export interface LeaseClock {
  /** Wall time, ms since the epoch: only written into the record as `heartbeatAt`. */
  wall(): number
  /** Monotonic ms: every expiry and takeover decision. */
  monotonic(): number
}

export const systemClock: LeaseClock = {
  wall: () => Date.now(),
  monotonic: () => performance.now(),
}

/** The share of the TTL a holder keeps as margin: it stops trusting its lease at 80 % of it. */
const HOLDER_MARGIN_SHARE = 0.2

/** The lease as an observer (e.g. `skipprd query`) sees it. */
export interface LeaseInfo {
  readonly owner: string
  readonly token: bigint
  readonly heartbeatAt: Date
  readonly ttlMs: number
  readonly released: boolean
  /** Neither released nor past its TTL: a writer would have to wait. */
  readonly live: boolean
}

export const DEFAULT_TTL_MS = 30_000
/**
 * More than the TTL: a waiter must watch a dead holder's record unchanged for the TTL before it
 * takes over, so a run that starts just after a holder on another host died still gets the lease.
 */
export const DEFAULT_WAIT_MS = 45_000
const DEFAULT_POLL_MS = 250

function recordOf(entry: StateEntry | undefined): LeaseRecord | undefined {
  return entry?.value as LeaseRecord | undefined
}

/** As an observer that reads once sees it, by the wall clocks (display only: see the top). */
function looksLive(record: LeaseRecord, now: number): boolean {
  return !record.released && now - record.heartbeatAt < record.ttlMs
}

export async function readLease(backend: StateBackend, key: string): Promise<LeaseInfo | undefined> {
  const record = recordOf(await backend.get(key))
  if (record === undefined) return undefined
  return {
    owner: record.owner,
    token: BigInt(record.token),
    heartbeatAt: new Date(record.heartbeatAt),
    ttlMs: record.ttlMs,
    released: record.released,
    live: looksLive(record, Date.now()),
  }
}

/**
 * Takes the lease when it is free, released, its holder gone, or unchanged for its TTL, waiting up
 * to `waitMs` for that. Every acquisition writes token = previous token + 1 with a conditional put
 * on the one lease key, so tokens strictly increase across acquisitions, releases and takeovers.
 */
export async function acquireLease(
  backend: StateBackend,
  key: string,
  pipeline: string,
  options: AcquireLeaseOptions & { readonly registry?: Set<Lease> },
): Promise<Lease> {
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS
  const clock = options.clock ?? systemClock
  const started = clock.monotonic()
  /** The held record's version as first seen, and when: the takeover clock. */
  const watch: LeaseWatch = options.watch ?? {}
  for (;;) {
    options.signal?.throwIfAborted()
    const outcome = await updateKey<AcquireOutcome>(backend, key, (current) => {
      const now = clock.monotonic()
      const held = recordOf(current)
      if (
        current !== undefined &&
        held !== undefined &&
        !held.released &&
        !options.isHolderGone?.(held.owner)
      ) {
        if (watch.seen?.version !== current.version) watch.seen = { version: current.version, at: now }
        const { at } = watch.seen
        if (now - at < held.ttlMs) return { result: { held, expiresAt: at + held.ttlMs } }
      }
      const token = held === undefined ? 1n : BigInt(held.token) + 1n
      const record: LeaseRecord = {
        owner: options.owner,
        token: token.toString(),
        heartbeatAt: clock.wall(),
        ttlMs,
        released: false,
      }
      const takeover = held !== undefined && !held.released
      return { write: record, result: { token, writeStartedAt: now, takeover } }
    })
    if (!('held' in outcome)) {
      watch.seen = undefined
      return new Lease({
        ...options,
        clock,
        backend,
        key,
        pipeline,
        token: outcome.token,
        ttlMs,
        validFrom: outcome.writeStartedAt,
        takeover: outcome.takeover,
      })
    }
    const now = clock.monotonic()
    const waited = now - started
    if (waited >= waitMs)
      throw new LeaseUnavailableError(pipeline, holderOf(outcome.held, clock.wall()), waited)
    const wait = Math.max(1, Math.min(pollMs, waitMs - waited, outcome.expiresAt - now))
    await sleep(wait, undefined, options.signal ? { signal: options.signal } : {}).catch((error: unknown) => {
      throw options.signal?.aborted ? options.signal.reason : error
    })
  }
}

type AcquireOutcome =
  | { readonly held: LeaseRecord; readonly expiresAt: number }
  | { readonly token: bigint; readonly writeStartedAt: number; readonly takeover: boolean }

function holderOf(record: LeaseRecord, now: number): LeaseHolder {
  return { owner: record.owner, token: BigInt(record.token), heartbeatAgeMs: now - record.heartbeatAt }
}

/** Refuses (STALE_FENCE) unless `token` is the token of the current, unreleased lease. */
export async function checkFence(
  backend: StateBackend,
  key: string,
  pipeline: string,
  token: bigint,
): Promise<void> {
  const record = recordOf(await backend.get(key))
  if (record === undefined) throw new StaleFenceError(pipeline, token, 'no writer lease exists')
  if (record.token !== token.toString()) {
    throw new StaleFenceError(
      pipeline,
      token,
      `the lease is now held by '${record.owner}' with token ${record.token}`,
    )
  }
  if (record.released) throw new StaleFenceError(pipeline, token, 'the lease was released')
}

interface LeaseInit
  extends Pick<AcquireLeaseOptions, 'owner' | 'heartbeatIntervalMs' | 'onLost' | 'onRenewed'> {
  readonly clock: LeaseClock
  readonly backend: StateBackend
  readonly key: string
  readonly pipeline: string
  readonly token: bigint
  readonly ttlMs: number
  /** Monotonic time the acquiring write was sent: the lease counts from then, not from its reply. */
  readonly validFrom: number
  readonly takeover: boolean
  /** Leases with a running heartbeat timer, so closing the store can stop them. */
  readonly registry?: Set<Lease> | undefined
}

/** A held writer lease. Pass `token` to fenced writes so a writer that lost the lease is refused. */
export class Lease {
  readonly pipeline: string
  readonly owner: string
  /** Fencing token: strictly greater than every earlier acquisition's token of this pipeline. */
  readonly token: bigint
  readonly ttlMs: number
  /** Taken from a holder that had not released it (one that died, or stopped heartbeating). */
  readonly takeover: boolean
  private readonly backend: StateBackend
  private readonly key: string
  private readonly onLost: ((error: StateError) => void) | undefined
  private readonly onRenewed: ((lease: Lease) => void) | undefined
  private readonly registry: Set<Lease> | undefined
  private state: 'held' | 'released' | 'lost' = 'held'
  private lostError: StateError | undefined
  private readonly clock: LeaseClock
  /** Monotonic time the last successful heartbeat (or the acquisition) was sent. */
  private validFrom: number
  private timer: NodeJS.Timeout | undefined
  private ticking = false

  constructor(init: LeaseInit) {
    this.backend = init.backend
    this.key = init.key
    this.pipeline = init.pipeline
    this.owner = init.owner
    this.token = init.token
    this.ttlMs = init.ttlMs
    this.takeover = init.takeover
    this.clock = init.clock
    this.validFrom = init.validFrom
    this.onLost = init.onLost
    this.onRenewed = init.onRenewed
    this.registry = init.registry
    const interval = init.heartbeatIntervalMs ?? Math.floor(init.ttlMs / 3)
    if (interval > 0) {
      this.timer = setInterval(() => void this.tick(), interval)
      // A forgotten lease must not keep the process alive.
      this.timer.unref()
      this.registry?.add(this)
    }
  }

  /**
   * Local view: held, and the last successful heartbeat was sent less than the TTL less the margin
   * ago (monotonic), so no waiter can have taken over. `assertHeld()` asks the store.
   */
  isValid(): boolean {
    return (
      this.state === 'held' &&
      this.clock.monotonic() - this.validFrom < this.ttlMs * (1 - HOLDER_MARGIN_SHARE)
    )
  }

  /** Extends the lease. Throws LEASE_LOST if it was taken over (or released). */
  async heartbeat(): Promise<void> {
    this.throwIfEnded()
    const sentAt = this.clock.monotonic()
    const wall = this.clock.wall()
    await this.guard(() =>
      updateKey(this.backend, this.key, (current) => {
        const record = this.ownRecord(current)
        return { write: { ...record, heartbeatAt: wall }, result: undefined }
      }),
    )
    this.validFrom = Math.max(this.validFrom, sentAt)
    this.onRenewed?.(this)
  }

  /** Throws LEASE_LOST unless the store still shows this lease as the current one. */
  async assertHeld(): Promise<void> {
    this.throwIfEnded()
    const current = await this.backend.get(this.key)
    await this.guard(async () => this.ownRecord(current))
  }

  /** Gives the lease up so the next writer need not wait. Idempotent; a lost lease is left alone. */
  async release(): Promise<void> {
    this.stopHeartbeats()
    if (this.state !== 'held') return
    this.state = 'released'
    await updateKey(this.backend, this.key, (current) => {
      const record = recordOf(current)
      if (record?.token !== this.token.toString() || record.released) return { result: undefined }
      return { write: { ...record, released: true }, result: undefined }
    })
  }

  /** Stops the automatic heartbeat without releasing (the store does this when it closes). */
  stopHeartbeats(): void {
    clearInterval(this.timer)
    this.timer = undefined
    this.registry?.delete(this)
  }

  private async tick(): Promise<void> {
    if (this.state !== 'held') return
    if (this.ticking) {
      // A heartbeat that hangs must not keep a lease alive that waiters may already take over.
      if (!this.isValid()) this.lose(this.expired('its heartbeat did not complete'))
      return
    }
    this.ticking = true
    try {
      await this.heartbeat()
    } catch (error) {
      // A transient failure is retried next tick, until the lease can no longer be assumed held.
      if (this.state === 'held' && !this.isValid()) {
        this.lose(this.expired(error instanceof Error ? error.message : String(error)))
      }
    } finally {
      this.ticking = false
    }
  }

  private expired(reason: string): LeaseLostError {
    const validMs = Math.round(this.ttlMs * (1 - HOLDER_MARGIN_SHARE))
    return new LeaseLostError(
      this.pipeline,
      this.token,
      `had no successful heartbeat for ${validMs} ms (${reason})`,
    )
  }

  private ownRecord(current: StateEntry | undefined): LeaseRecord {
    const record = recordOf(current)
    if (record === undefined) throw new LeaseLostError(this.pipeline, this.token, 'was deleted')
    if (record.token !== this.token.toString()) {
      throw new LeaseLostError(
        this.pipeline,
        this.token,
        `was taken over by '${record.owner}' (token ${record.token})`,
      )
    }
    if (record.released) throw new LeaseLostError(this.pipeline, this.token, 'was released')
    return record
  }

  private async guard<T>(action: () => Promise<T>): Promise<T> {
    try {
      return await action()
    } catch (error) {
      if (hasCode(error, LEASE_LOST)) this.lose(error as StateError)
      throw error
    }
  }

  private throwIfEnded(): void {
    if (this.state === 'released')
      throw new LeaseLostError(this.pipeline, this.token, 'was released by this holder')
    if (this.lostError !== undefined) throw this.lostError
  }

  private lose(error: StateError): void {
    if (this.state === 'lost') return
    this.state = 'lost'
    this.lostError = error
    this.stopHeartbeats()
    this.onLost?.(error)
  }
}
