import type { RecordFormat, SourceOffset } from './batch.js'
import type { ConnectorContext, ConnectorDefinition } from './connector.js'
import type { RefusedRecord } from './deadletter.js'
import type { NamespaceSchema } from './schema.js'

/** A run of rows of one namespace, and the source position reached after them. */
export interface SourceChunk {
  readonly namespace: string
  readonly format: RecordFormat
  readonly rows: number
  readonly body: Uint8Array
  /** Resuming from this offset must not re-read these rows, nor skip anything after them. */
  readonly offset: SourceOffset
  /**
   * The namespace's schema the rows are read by, set when the runner may not hold it: on a chunk
   * after which it changed (new fields, widened types), and on the first chunk of the namespace in
   * a read whose discovery can differ from an earlier run's (the runner saved its schema in an
   * earlier run; new files, say, bring new fields). The runner saves a new version only when this
   * adds fields or widens types to the saved one, so an unchanged schema costs nothing.
   */
  readonly schema?: NamespaceSchema
  /**
   * Records read since the chunk before that the source cannot pass on (deadletter.ts): they are
   * not in `body` nor in `rows`, and are committed with the chunk's rows.
   */
  readonly refused?: readonly RefusedRecord[]
}

export interface ReadOptions {
  /** Aborted when the runner stops; a source ends its iteration promptly. */
  readonly signal: AbortSignal
  /**
   * false (`sync --once`): read what the source has now, then end.
   * true: keep reading (tail, poll) until `signal` aborts.
   */
  readonly follow: boolean
}

export interface Source {
  /** The namespaces the source holds now, with their schemas. */
  discover(): Promise<NamespaceSchema[]>
  /** Chunks in source order, starting after `from` (from the beginning when undefined). */
  read(from: SourceOffset | undefined, options: ReadOptions): AsyncIterable<SourceChunk>
  /**
   * Opens a connection with the configured credentials (or lists the configured files) and throws
   * the error `read` would throw if it cannot, then lets go. Reads no data and changes nothing:
   * `skipprd doctor` calls it.
   */
  check?(): Promise<void>
  /**
   * The records the source holds now in `namespace` (0 for a namespace it does not have), as a
   * read from the start would give them, records it would refuse included: what `skipprd verify`
   * compares with the destination. Only for sources that hold their data and can count it.
   */
  count?(namespace: string): Promise<number>
  /**
   * A push source (one that clients send to) answers a client only once its rows are durable, so
   * it wants them committed soon, not after the pipeline's buffer threshold: the runner commits
   * its chunks at least every `maxDelayMs` and at `maxBytes` (whichever of this and the buffer's
   * own byte threshold comes first). Pull sources leave it unset.
   */
  readonly commitWindow?: CommitWindow
  /**
   * Called after each WAL commit, in order, with the offset of the last chunk the commit holds:
   * every chunk read up to it is durable, and a push source may answer the clients that sent them.
   * Not called for chunks whose commit failed: the run then fails, and `close` follows.
   */
  committed?(offset: SourceOffset): void
  /**
   * Called with true when a commit waits because the WAL is at its size cap (WAL_MAX_TOTAL_BYTES:
   * the destination lands more slowly than clients send), and with false once that commit went
   * through. A push source refuses new requests meanwhile (HTTP: 429 with Retry-After) rather than
   * hold them until the WAL has room.
   */
  walFull?(full: boolean): void
  /**
   * Called, in commit order, each time the destination holds a batch, with the offset that batch
   * was committed with: every chunk read up to it has landed, and a push source may tell its
   * clients so (a durable ack). When a run starts, it is called first with the offset the last
   * run's landings reached, so what landed before a restart is confirmed again. Pull sources, and
   * pipelines without a destination, never hear it.
   */
  landed?(offset: SourceOffset): void
  close(): Promise<void>
}

export interface CommitWindow {
  readonly maxDelayMs: number
  readonly maxBytes?: number
}

export interface SourceDefinition<Config = unknown> extends ConnectorDefinition<Config> {
  readonly kind: 'source'
  create(config: Config, context: ConnectorContext): Source | Promise<Source>
  /**
   * Optional, for a push source that clients reach over the network: while this process waits for
   * the pipeline's writer lease another process holds, the runner opens the standby, which answers
   * clients that this process is not the writer (HTTP 503 + Retry-After) instead of refusing their
   * connections. The runner closes it once it has the lease, before it creates the source.
   */
  standby?(config: Config, context: ConnectorContext): Standby | Promise<Standby>
}

/** What `SourceDefinition.standby` opened; `close` frees the address for the source. */
export interface Standby {
  close(): Promise<void>
}
