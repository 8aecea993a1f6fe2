/**
 * In-memory reference implementations of the contract, for the runner's own tests and as a model
 * for connector authors. `MemorySink` is exactly-once: it remembers landed identities.
 */
import type { SinkBatch, SourceOffset } from './batch.js'
import { batchKey } from './batch.js'
import type { NamespaceSchema } from './schema.js'
import type { Guarantee, Sink, WriteOutcome } from './sink.js'
import { alreadyLanded, cannotLand, landed } from './sink.js'
import type { ReadOptions, Source, SourceChunk } from './source.js'

/** Replays a fixed list of chunks; the offset is the index of the next chunk. */
export class MemorySource implements Source {
  constructor(
    private readonly schemas: readonly NamespaceSchema[],
    private readonly chunks: readonly Omit<SourceChunk, 'offset'>[],
  ) {}

  async discover(): Promise<NamespaceSchema[]> {
    return [...this.schemas]
  }

  async *read(from: SourceOffset | undefined, options: ReadOptions): AsyncIterable<SourceChunk> {
    const start = typeof from === 'number' ? from : 0
    for (let i = start; i < this.chunks.length && !options.signal.aborted; i++) {
      yield { ...(this.chunks[i] as SourceChunk), offset: i + 1 }
    }
  }

  async close(): Promise<void> {}
}

export class MemorySink implements Sink {
  readonly guarantee: Guarantee = 'exactly-once'
  readonly schemas = new Map<string, NamespaceSchema>()
  readonly batches = new Map<string, SinkBatch>()
  private highestFence = new Map<string, bigint>()

  async prepare(schema: NamespaceSchema): Promise<void> {
    this.schemas.set(schema.namespace, schema)
  }

  async write(batch: SinkBatch): Promise<WriteOutcome> {
    const fence = this.highestFence.get(batch.id.pipeline) ?? 0n
    if (batch.fence < fence) return cannotLand(new Error(`fenced: token ${batch.fence} < ${fence}`))
    this.highestFence.set(batch.id.pipeline, batch.fence)
    const key = batchKey(batch.id)
    if (this.batches.has(key)) return alreadyLanded()
    this.batches.set(key, batch)
    return landed(batch.parts.reduce((sum, part) => sum + part.rows, 0))
  }

  rowCount(namespace?: string): number {
    let rows = 0
    for (const batch of this.batches.values())
      for (const part of batch.parts) if (!namespace || part.namespace === namespace) rows += part.rows
    return rows
  }

  async close(): Promise<void> {}
}
