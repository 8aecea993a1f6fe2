import type { StateBackend, StateEntry } from './backend.js'
import type { JsonValue } from './json.js'
import { PipelineKeys } from './keys.js'
import { LandingFailures } from './landing-failures.js'
import {
  type AcquireLeaseOptions,
  acquireLease,
  checkFence,
  type Lease,
  type LeaseInfo,
  readLease,
} from './lease.js'
import { PipelineCounters } from './pipeline-counters.js'
import { readResumeOffset, updateResumeOffset } from './resume.js'
import { getSchema, listSchemas, type SavedSchema, saveSchema } from './schemas.js'

/** For writes made by the lease holder: the write is refused (STALE_FENCE) if `fence` is stale. */
export interface FenceOptions {
  readonly fence?: bigint
}

/** One key written by compare-and-set. */
export interface VersionedRecord {
  read(): Promise<StateEntry | undefined>
  write(value: JsonValue, expectedVersion: number | undefined): Promise<boolean>
}

type EnabledRecord = { readonly enabled: boolean }
type LastRunRecord = { readonly at: number }

/** Everything saved for one pipeline of one workspace. Get it from `StateStore.pipeline(name)`. */
export class PipelineState {
  readonly workspace: string
  readonly name: string
  private readonly backend: StateBackend
  private readonly keys: PipelineKeys
  private readonly leases: Set<Lease>
  /** Rows and bytes committed and landed per namespace (`SHOW STATS`). */
  readonly counters: PipelineCounters
  /** Failed landing attempts of pending batches (`SHOW PIPELINE`). */
  readonly landingFailures: LandingFailures

  constructor(backend: StateBackend, workspace: string, name: string, leases: Set<Lease>) {
    this.backend = backend
    this.workspace = workspace
    this.name = name
    this.keys = new PipelineKeys(workspace, name)
    this.leases = leases
    this.counters = new PipelineCounters(backend, this.keys.counters)
    this.landingFailures = new LandingFailures(backend, this.keys.landingFailures)
  }

  /** The source position to resume from, or undefined to start from the beginning. */
  getResumeOffset(): Promise<JsonValue | undefined> {
    return readResumeOffset(this.backend, this.keys.resume)
  }

  async saveResumeOffset(offset: JsonValue, options: FenceOptions = {}): Promise<void> {
    await this.checkOptionalFence(options)
    await updateResumeOffset(this.backend, this.keys.resume, this.name, () => offset, options.fence)
  }

  /**
   * Takes the pipeline writer lease, waiting up to `waitMs` (LEASE_UNAVAILABLE after that).
   * Before returning it claims the resume position with the new token, so from then on no write
   * fenced with an older token lands there.
   */
  async acquireLease(options: AcquireLeaseOptions): Promise<Lease> {
    const lease = await acquireLease(this.backend, this.keys.lease, this.name, {
      ...options,
      registry: this.leases,
    })
    try {
      await updateResumeOffset(this.backend, this.keys.resume, this.name, (offset) => offset, lease.token)
    } catch (error) {
      await lease.release()
      throw error
    }
    return lease
  }

  /** The lease as stored, held or not; undefined if no writer ever took it. */
  getLeaseInfo(): Promise<LeaseInfo | undefined> {
    return readLease(this.backend, this.keys.lease)
  }

  /** Throws STALE_FENCE unless `token` belongs to the current, unreleased writer lease. */
  checkFence(token: bigint): Promise<void> {
    return checkFence(this.backend, this.keys.lease, this.name, token)
  }

  /** False once disabled (DISABLE PIPELINE); pipelines start enabled. */
  async isEnabled(): Promise<boolean> {
    const entry = await this.backend.get(this.keys.enabled)
    return (entry?.value as EnabledRecord | undefined)?.enabled ?? true
  }

  async setEnabled(enabled: boolean): Promise<void> {
    const record: EnabledRecord = { enabled }
    await this.backend.put(this.keys.enabled, record)
  }

  async getLastRun(): Promise<Date | undefined> {
    const entry = await this.backend.get(this.keys.lastRun)
    const record = entry?.value as LastRunRecord | undefined
    return record && new Date(record.at)
  }

  async setLastRun(at: Date = new Date(), options: FenceOptions = {}): Promise<void> {
    await this.checkOptionalFence(options)
    const record: LastRunRecord = { at: at.getTime() }
    await this.backend.put(this.keys.lastRun, record)
  }

  /** Saves a namespace's schema; returns its version, which grows only when the schema changes. */
  async saveSchema(namespace: string, schema: JsonValue, options: FenceOptions = {}): Promise<number> {
    await this.checkOptionalFence(options)
    return saveSchema(this.backend, this.keys, namespace, schema)
  }

  /** The newest schema of a namespace, or the given version of it. */
  getSchema(namespace: string, version?: number): Promise<SavedSchema | undefined> {
    return getSchema(this.backend, this.keys, namespace, version)
  }

  /** The newest schema of every namespace. */
  listSchemas(): Promise<SavedSchema[]> {
    return listSchemas(this.backend, this.keys)
  }

  /**
   * The record a WAL storage keeps beside its log (the S3 WAL: its watermark and writers), read,
   * and written only if it is still at the version read (undefined: absent).
   */
  walRecord(): VersionedRecord {
    const { backend } = this
    const key = this.keys.walLog
    return {
      read: () => backend.get(key),
      async write(value, expectedVersion) {
        const condition =
          expectedVersion === undefined ? { mustNotExist: true as const } : { expectedVersion }
        return (await backend.put(key, value, condition)).ok
      },
    }
  }

  /** RESET PIPELINE: forgets the resume position and counters. Schemas, flags, last run and the lease stay. */
  async reset(): Promise<void> {
    // Keeps the stored fence, so a writer fenced out before the reset stays fenced out.
    await updateResumeOffset(this.backend, this.keys.resume, this.name, () => undefined, undefined)
    await this.counters.clear()
    await this.landingFailures.clear()
  }

  /**
   * Deletes everything saved for the pipeline, one key at a time (re-run it if interrupted). The
   * lease record stays: it carries the fencing counter, and tokens must never start over.
   */
  async drop(): Promise<void> {
    for (const item of await this.backend.list(this.keys.prefix)) await this.backend.delete(item.key)
  }

  private async checkOptionalFence(options: FenceOptions): Promise<void> {
    if (options.fence !== undefined) await this.checkFence(options.fence)
  }
}
