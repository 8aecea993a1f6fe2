/**
 * The failed landing attempts of a pipeline's pending batches: how many, since when, the last error.
 * `SHOW PIPELINE` lists them beside the WAL's pending batches, so that an operator sees which batch
 * holds a pipeline up and why, before moving it aside (`DEADLETTER BATCH`).
 *
 * One record per pipeline, a map keyed by batch (`<epoch>/<seq>`). The runner records each failed
 * attempt and forgets the batches it lands, so the record holds only batches that are still pending.
 * Losing a write (a crash) loses a count, never a batch: this is a report, not part of the guarantee.
 */
import type { StateBackend } from './backend.js'
import { WriteConflictError } from './errors.js'
import type { JsonValue } from './json.js'

/** A batch's identity as the WAL gives it (structurally the connector-api type). */
export interface FailedBatch {
  readonly epoch: string
  readonly seq: bigint
}

export interface LandingFailure {
  readonly epoch: string
  readonly seq: bigint
  readonly attempts: number
  readonly firstFailedAt: Date
  readonly lastFailedAt: Date
  /** One line. */
  readonly lastError: string
}

interface StoredFailure {
  readonly attempts: number
  readonly first: number
  readonly last: number
  readonly error: string
}

type Stored = Record<string, StoredFailure>

const MAX_ATTEMPTS = 100

export class LandingFailures {
  constructor(
    private readonly backend: StateBackend,
    private readonly key: string,
  ) {}

  /** Counts one failed attempt to land `batch`. */
  record(batch: FailedBatch, error: string, at = new Date()): Promise<void> {
    const id = idOf(batch)
    return this.update((stored) => {
      const seen = stored[id]
      const line = error.split('\n')[0] ?? ''
      return {
        ...stored,
        [id]: {
          attempts: (seen?.attempts ?? 0) + 1,
          first: seen?.first ?? at.getTime(),
          last: at.getTime(),
          error: line,
        },
      }
    })
  }

  /** Forgets `batch` and every batch of its epoch before it: they landed. */
  forgetThrough(batch: FailedBatch): Promise<void> {
    return this.update((stored) => {
      const kept: Stored = {}
      for (const [id, failure] of Object.entries(stored)) {
        const [epoch, seq] = id.split('/') as [string, string]
        if (epoch !== batch.epoch || BigInt(seq) > batch.seq) kept[id] = failure
      }
      return kept
    })
  }

  async read(): Promise<LandingFailure[]> {
    const stored = ((await this.backend.get(this.key))?.value ?? {}) as unknown as Stored
    return Object.entries(stored).map(([id, f]) => {
      const [epoch, seq] = id.split('/') as [string, string]
      return {
        epoch,
        seq: BigInt(seq),
        attempts: f.attempts,
        firstFailedAt: new Date(f.first),
        lastFailedAt: new Date(f.last),
        lastError: f.error,
      }
    })
  }

  async clear(): Promise<void> {
    await this.backend.delete(this.key)
  }

  private async update(change: (stored: Stored) => Stored): Promise<void> {
    let current = await this.backend.get(this.key)
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const next = change((current?.value ?? {}) as unknown as Stored)
      const condition = current ? { expectedVersion: current.version } : { mustNotExist: true as const }
      const put = await this.backend.put(this.key, next as unknown as JsonValue, condition)
      if (put.ok) return
      current = put.current
    }
    throw new WriteConflictError(this.key, MAX_ATTEMPTS)
  }
}

function idOf(batch: FailedBatch): string {
  return `${batch.epoch}/${batch.seq}`
}
