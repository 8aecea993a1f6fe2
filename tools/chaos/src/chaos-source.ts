/**
 * What a chaos run reads, and how its result is checked. The Sample source: every row lands
 * (verify.ts; into an at-least-once destination, once its tagged copies are removed:
 * verify-copies.ts). The `--refused` CSV file for the File source: good rows land, the bad ones the
 * source or the destination refuses are deadletters in `_dl_<pipeline>`, in the same database
 * (verify-refused.ts). Either source only grows, so a run resumed at its offset reads on.
 */
import { deadletterNamespace } from '@skippr/connector-api'
import type { Destination, SinkKind } from './destination.js'
import { ChaosUsageError } from './errors.js'
import { appendFileRows, createRefusingTable, fileSourceEntry } from './refused-file.js'
import { isRefusedSink, REFUSED_SINKS, rowPlan } from './refused-rows.js'
import { verifyExactlyOnce } from './verify.js'
import { verifyOnceAfterCopies } from './verify-copies.js'
import { type RefusedCounts, verifyRefused } from './verify-refused.js'

export interface Verdict {
  /** None means PASS. */
  readonly problems: readonly string[]
  /** With the `--refused` source: where the file's rows are. */
  readonly refused?: RefusedCounts
  /** Into an at-least-once destination: rows landed again by retries, removed by their part key. */
  readonly extraCopies?: number
}

export interface ChaosSource {
  /** The data_sources entry of skippr.yml for a source of `rows` rows. */
  entry(rows: number): Record<string, unknown>
  /** Whether the pipeline has a deadletter sink (the data sink's database). */
  readonly deadletters: boolean
  /** Before the first run: what the destination must hold already. */
  prepare(destination: Destination): Promise<void>
  /** Grows the source from `from` rows to `to`; from 0 before the first run. */
  grow(from: number, to: number): Promise<void>
  verify(destination: Destination, rows: number): Promise<Verdict>
}

export interface SourceSettings {
  readonly sink: SinkKind
  readonly dataSeed: number
  /** The Sample source's rows per chunk. */
  readonly batchRows: number
  /** The share of bad rows; 0 is the Sample source. */
  readonly refused: number
  /** The File source's bytes per chunk. */
  readonly chunkBytes: number
}

export function chaosSource(settings: SourceSettings, workDir: string, pipeline: string): ChaosSource {
  return settings.refused > 0 ? refusedFileSource(settings, workDir, pipeline) : sampleSource(settings)
}

function sampleSource({ dataSeed, batchRows }: SourceSettings): ChaosSource {
  return {
    entry: (rows) => ({ Sample: { dataset: 'bikehire', rows, seed: dataSeed, batch_rows: batchRows } }),
    deadletters: false,
    prepare: async () => {},
    grow: async () => {},
    verify: async (destination, rows) =>
      destination.retriesCopy
        ? verifyOnceAfterCopies(destination, { rows, seed: dataSeed })
        : { problems: await verifyExactlyOnce(destination, { rows, seed: dataSeed }) },
  }
}

function refusedFileSource(settings: SourceSettings, workDir: string, pipeline: string): ChaosSource {
  const { sink } = settings
  if (!isRefusedSink(sink))
    throw new ChaosUsageError(`--refused works with --sink ${REFUSED_SINKS.join(' or ')}`)
  const plan = rowPlan(settings.dataSeed, settings.refused, sink)
  return {
    entry: () => fileSourceEntry(settings.chunkBytes),
    deadletters: true,
    // Only PostgreSQL's table is made beforehand: DuckDB's refusals need no constraint (refused-rows.ts).
    prepare: (destination) => (sink === 'postgres' ? createRefusingTable(destination) : Promise.resolve()),
    grow: (from, to) => appendFileRows(workDir, plan, from, to),
    verify: async (destination, rows) => {
      const expected = { rows, plan, deadletterTable: deadletterNamespace(pipeline) }
      const { problems, counts } = await verifyRefused(destination, expected)
      return { problems, refused: counts }
    },
  }
}
