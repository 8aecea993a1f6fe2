/**
 * One sink as the lander uses it: opened once, in the background, and again after a failed open;
 * each namespace schema prepared once per schema object (the registry hands out one per version);
 * each attempt's failure turned into an outcome, so the lander owns retries. A failure to open,
 * prepare or write is a `retry`, unless the sink marked it `permanent` (connector-api's errors.ts):
 * then retrying cannot help.
 */
import {
  isPermanent,
  type NamespaceSchema,
  type Sink,
  type SinkBatch,
  type WriteOutcome,
} from '@skippr/connector-api'
import type { Logger } from 'pino'

export class SinkHandle {
  /** The sink's opening, undefined again after a failed one; `sink` once it is open. */
  private opening: Promise<Sink> | undefined
  private sink: Sink | undefined
  private readonly prepared = new WeakMap<NamespaceSchema, Promise<void>>()

  constructor(
    private readonly openSink: () => Promise<Sink>,
    /** Schemas prepared as soon as the sink is open, so tables exist even before rows arrive. */
    private readonly initialSchemas: () => readonly NamespaceSchema[],
    private readonly logger: Logger,
  ) {}

  /** The open sink, if it is. */
  get current(): Sink | undefined {
    return this.sink
  }

  /** One attempt: open and prepare the sink if needed, then write. */
  async write(
    batch: SinkBatch,
    during: (write: Promise<WriteOutcome>) => Promise<WriteOutcome>,
  ): Promise<WriteOutcome> {
    try {
      const sink = await this.open()
      for (const part of batch.parts) await this.prepare(sink, part.schema)
      return await during(sink.write(batch))
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error))
      return { status: isPermanent(error) ? 'fatal' : 'retry', error: failure }
    }
  }

  /** Opens the sink once and prepares the initial schemas. */
  async open(): Promise<Sink> {
    this.opening ??= this.openSink().then(
      (sink) => (this.sink = sink),
      (error: unknown) => {
        this.opening = undefined
        throw error
      },
    )
    const sink = await this.opening
    for (const schema of this.initialSchemas()) await this.prepare(sink, schema)
    return sink
  }

  /** Opens the sink if needed and prepares `schema` on it: all a schema sink is used for. */
  async ready(schema: NamespaceSchema): Promise<void> {
    await this.prepare(await this.open(), schema)
  }

  /**
   * A sink still being opened (nothing was written yet) is closed once it is open: the run does not
   * wait for a destination that does not answer.
   */
  async close(): Promise<void> {
    const close = (sink: Sink) =>
      sink.close().catch((error: unknown) => this.logger.warn({ err: error }, 'closing the sink failed'))
    if (this.sink) await close(this.sink)
    else void this.opening?.then(close, () => {})
  }

  private prepare(sink: Sink, schema: NamespaceSchema): Promise<void> {
    let preparing = this.prepared.get(schema)
    if (preparing === undefined) {
      preparing = sink.prepare(schema).catch((error: unknown) => {
        this.prepared.delete(schema)
        throw error
      })
      this.prepared.set(schema, preparing)
    }
    return preparing
  }
}
