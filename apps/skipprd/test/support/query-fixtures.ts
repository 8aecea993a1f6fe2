/**
 * For the query/df tests: a pipeline's WAL and saved schemas written through the same packages the
 * runner uses (@skippr/state, @skippr/wal), with rows the test chooses to the byte.
 */
import type { BatchPart, Field, NamespaceSchema } from '@skippr/connector-api'
import { openStateStore } from '@skippr/state'
import { openWal } from '@skippr/wal'

export interface SeedPart {
  readonly schema: NamespaceSchema
  readonly format: 'csv' | 'jsonl'
  /** Newline-terminated lines. */
  readonly lines: readonly string[]
}

/**
 * Saves each part's schema (a new version when it changed) and commits each batch, in order, to
 * the pipeline's WAL under `dataDir`. Returns the batch seqs.
 */
export async function seedWal(
  dataDir: string,
  pipeline: string,
  batches: readonly (readonly SeedPart[])[],
): Promise<bigint[]> {
  const store = await openStateStore({ dataDir })
  const state = store.pipeline(pipeline)
  const wal = await openWal({
    pipeline,
    dataDir,
    positions: {
      load: () => state.getResumeOffset(),
      save: (offset) => (offset === undefined ? state.reset() : state.saveResumeOffset(offset)),
    },
  })
  const seqs: bigint[] = []
  try {
    for (const [i, batch] of batches.entries()) {
      const parts: BatchPart[] = []
      for (const part of batch) {
        const schemaVersion = await state.saveSchema(part.schema.namespace, part.schema as never)
        const body = Buffer.from(part.lines.map((l) => `${l}\n`).join(''), 'utf8')
        parts.push({
          namespace: part.schema.namespace,
          schemaVersion,
          format: part.format,
          rows: part.lines.length,
          body,
        })
      }
      seqs.push((await wal.commit({ offset: { batch: i + 1 }, parts })).seq)
    }
    return seqs
  } finally {
    await wal.close()
    await store.close()
  }
}

/** Lands the first `count` pending batches, as a sink would have. */
export async function landBatches(dataDir: string, pipeline: string, count: number): Promise<void> {
  const store = await openStateStore({ dataDir })
  const state = store.pipeline(pipeline)
  const wal = await openWal({
    pipeline,
    dataDir,
    positions: {
      load: () => state.getResumeOffset(),
      save: async (offset) => state.saveResumeOffset(offset ?? null),
    },
  })
  try {
    let landed = 0
    for await (const batch of wal.pending()) {
      if (landed++ === count) break
      await wal.markLanded(batch.id)
    }
  } finally {
    await wal.close()
    await store.close()
  }
}

export function schema(namespace: string, fields: readonly Field[]): NamespaceSchema {
  return { namespace, fields }
}

/** A skippr.yml whose pipelines all read a Sample source and keep their data in the WAL. */
export function walOnlyConfig(pipelines: readonly string[], rows = 1000): string {
  return [
    '# test project',
    'data_sources:',
    '  sample:',
    `    Sample: { dataset: bikehire, rows: ${rows}, batch_rows: 250 } # deterministic`,
    'pipelines:',
    ...pipelines.flatMap((name) => [
      `  ${name}:`,
      '    data_source: data_sources.sample',
      '    buffer_threshold_bytes: 20000',
    ]),
    '',
  ].join('\n')
}
