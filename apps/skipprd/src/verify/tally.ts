/**
 * What `skipprd verify` compares, per namespace of a pipeline (those saved, counted or pending in
 * its WAL): the rows the source holds now, the rows and duplicates in the destination, the rows
 * pending in the WAL and those set aside (verdict.ts judges them). Nothing is taken: no writer
 * lease, so a sync running meanwhile can move the numbers, and a note says when one holds it.
 */
import { deadletterNamespace, type NamespaceSchema, type Sink, type Source } from '@skippr/connector-api'
import { connectorContext, withConnector } from '../doctor/with-connector.js'
import type { ResolvedPipeline } from '../runner/session.js'
import { type Recorded, readRecorded, type StateEnvironment } from './recorded.js'
import { judge, type NamespaceTally } from './verdict.js'

export interface PipelineTally {
  readonly pipeline: string
  readonly pendingBatches: number
  readonly namespaces: readonly NamespaceTally[]
  /** What could not be compared, and why the numbers may be moving. */
  readonly notes: readonly string[]
}

/** A pipeline with a destination to compare with. */
export type PipelineWithSink = ResolvedPipeline & { readonly sink: NonNullable<ResolvedPipeline['sink']> }

type Counts = Map<string, number> | undefined

export async function tallyPipeline(
  environment: StateEnvironment,
  pipeline: PipelineWithSink,
): Promise<PipelineTally> {
  const { settings } = pipeline
  const recorded = await readRecorded(environment, settings)
  const namespaces = namespacesOf(recorded, deadletterNamespace(settings.name))
  const key = (namespace: string) => recorded.schemas.get(namespace)?.primaryKey ?? []
  const context = connectorContext(environment.file.dir, settings, environment.logger)
  // With no sync running only the source can change meanwhile: counted last, rows it gained show
  // as rows not accounted for (not synced yet), never as rows landed twice.
  const landed = await withConnector(pipeline.sink, context, (sink: Sink) =>
    countDestination(sink, namespaces, recorded.schemas),
  )
  const source = await withConnector(pipeline.source, context, (source: Source) =>
    countEach(namespaces, source.count?.bind(source)),
  )
  return {
    pipeline: settings.name,
    pendingBatches: recorded.pending.batches,
    namespaces: namespaces.map((namespace) =>
      judge(
        {
          namespace,
          sourceRows: source?.get(namespace),
          destinationRows: landed.rows?.get(namespace),
          duplicates: landed.duplicates?.get(namespace),
          pendingRows: recorded.pending.namespaces.get(namespace)?.rows ?? 0,
          deadletterRows: recorded.counters.get(namespace)?.deadletterRows ?? 0,
        },
        key(namespace),
      ),
    ),
    notes: notes(recorded, pipeline, { source, ...landed }),
  }
}

/**
 * The namespaces recorded, less the deadletters the WAL carries to the deadletter sink: those are
 * source rows, counted as set aside in their own namespace.
 */
function namespacesOf(recorded: Recorded, deadletters: string): string[] {
  const all = [...recorded.schemas.keys(), ...recorded.counters.keys(), ...recorded.pending.namespaces.keys()]
  return [...new Set(all)].filter((namespace) => namespace !== deadletters).sort()
}

/** Each namespace's landed rows and, by its primary key, duplicates (namespaces without one left out). */
async function countDestination(
  sink: Sink,
  namespaces: readonly string[],
  schemas: ReadonlyMap<string, NamespaceSchema>,
): Promise<{ rows: Counts; duplicates: Counts }> {
  const rows = await countEach(namespaces, sink.count?.bind(sink))
  const duplicates = sink.duplicates?.bind(sink)
  const key = (namespace: string) => schemas.get(namespace)?.primaryKey ?? []
  const keyed = namespaces.filter((namespace) => key(namespace).length > 0)
  return {
    rows,
    duplicates: duplicates && (await countEach(keyed, (namespace) => duplicates(namespace, key(namespace)))),
  }
}

/** `count` of each namespace, one after another; undefined when the connector cannot count. */
async function countEach(
  namespaces: readonly string[],
  count: ((namespace: string) => Promise<number>) | undefined,
): Promise<Counts> {
  if (count === undefined) return undefined
  const counts = new Map<string, number>()
  for (const namespace of namespaces) counts.set(namespace, await count(namespace))
  return counts
}

function notes(
  recorded: Recorded,
  pipeline: PipelineWithSink,
  counted: { source: Counts; rows: Counts; duplicates: Counts },
): string[] {
  const notes: string[] = []
  if (recorded.lease?.live)
    notes.push(
      `a sync holds the writer lease (${recorded.lease.owner}): the numbers may move while they are read; run verify when no sync runs`,
    )
  if (counted.source === undefined)
    notes.push(`source rows: not counted, not supported by ${pipeline.source.type}`)
  if (counted.rows === undefined)
    notes.push(`destination rows: not counted, not supported by ${pipeline.sink.type}`)
  if (counted.duplicates === undefined)
    notes.push(`duplicates: not looked for, not supported by ${pipeline.sink.type}`)
  return notes
}
