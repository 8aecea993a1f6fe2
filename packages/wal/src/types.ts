/**
 * The shapes the WAL stores. They are declared here, structurally identical to `@skippr/connector-api`'s
 * `BatchPart`, `BatchIdentity` and `JsonValue`, so this package depends on `@skippr/sf` alone while the
 * runner passes connector-api values straight in.
 */

export type RecordFormat = 'csv' | 'jsonl'

/** JSON-serialisable data. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | readonly JsonValue[]
  | { readonly [k: string]: JsonValue }

/** A source position, opaque to the WAL. `undefined` means "from the beginning". */
export type Offset = JsonValue

/** The rows of one namespace inside a batch, as encoded bytes (`csv` or `jsonl`, newline-terminated). */
export interface BatchPart {
  readonly namespace: string
  readonly schemaVersion: number
  readonly format: RecordFormat
  readonly rows: number
  readonly body: Uint8Array
}

/**
 * Stable across retries and restarts, unique across resets: `epoch` is minted when the WAL is created and
 * again by reset(), and `seq` never repeats within an epoch.
 */
export interface BatchIdentity {
  readonly pipeline: string
  readonly epoch: string
  readonly seq: bigint
}

/**
 * A part as commit() takes it: a BatchPart, or one whose body comes in pieces that are stored back to back
 * (the buffer hands over its chunks this way instead of joining them first).
 */
export interface PartInput extends Omit<BatchPart, 'body'> {
  readonly body: Uint8Array | readonly Uint8Array[]
}

/** What commit() stores: the rows of one buffer flush and the source position reached after them. */
export interface BatchInput {
  readonly offset: Offset | undefined
  readonly parts: readonly PartInput[]
}

/** A committed batch as pending() yields it. Part bodies may share one buffer (zero-copy views). */
export interface WalBatch {
  readonly id: BatchIdentity
  /**
   * When the batch was committed, in ms since 1970 by the committing process's clock, as stored in the
   * WAL: the same on every read, on any host, however long after. Absent for a batch an older WAL
   * format holds (version 1).
   */
  readonly committedAt?: number
  readonly offset: Offset | undefined
  readonly parts: readonly BatchPart[]
}

/**
 * Where the WAL keeps the resume position once the batches that carried it are gone from the log. The
 * runner implements it with `@skippr/state`. `save` must be durable when it resolves.
 */
export interface ResumePositions {
  load(): Promise<Offset | undefined>
  save(offset: Offset | undefined): Promise<void>
}
