/**
 * The one way a user changes a saved schema: `metadata apply`, `LOAD SCHEMA` and `ALTER TABLE`
 * all come here. The change is saved as the namespace's next schema version, holding the writer
 * lease for the moment it takes (so it is refused while a sync runs: that sync would go on with
 * the schema it loaded and could save its own next version over it). Versions are write-once and
 * every WAL batch part names the version it was read with, so rows committed before the change
 * still land and read as they were read; rows the source gives from the next sync on follow it.
 * Hence one refusal here: a rename or merge while rows of the namespace are pending in the WAL,
 * which would land (or, without a data_sink, read) under the old name beside the new one.
 */
import type { SinkDefinition } from '@skippr/connector-api'
import type { JsonValue } from '@skippr/state'
import type { PipelineHandle } from '../query/catalog.js'
import { NamespaceNotFoundError } from '../query/errors.js'
import { summarisePending } from '../query/pending.js'
import { withLease } from '../query/writer-lease.js'
import type { AppliedSchema } from './applied.js'
import { changedSchema, type SchemaChange } from './changes.js'
import { SchemaChangeRefusedError } from './errors.js'

export interface AppliedChange {
  readonly namespace: string
  readonly version: number
  readonly schema: AppliedSchema
  /** False when the schema already was what the change asks for (no version saved). */
  readonly changed: boolean
}

/** Applies `changes` (namespace → change) together; `statement` names the request in a refusal. */
export async function applySchemaChanges(
  pipeline: PipelineHandle,
  changes: ReadonlyMap<string, SchemaChange>,
  statement: string,
): Promise<AppliedChange[]> {
  return withLease(pipeline, statement, async (lease) => {
    const { state, settings } = pipeline
    const saved = await state.listSchemas()
    // Every change is checked before any is saved: a refused one leaves all as they were.
    const planned = [...changes].map(([namespace, change]) => {
      const current = saved.find((s) => s.namespace === namespace)
      if (!current)
        throw new NamespaceNotFoundError(
          settings.name,
          namespace,
          saved.map((s) => s.namespace),
        )
      const schema = current.schema as unknown as AppliedSchema
      return { namespace, current, next: changedSchema(schema, change), schema }
    })
    await refuseMovesWhilePending(pipeline, changes)
    const applied: AppliedChange[] = []
    for (const { namespace, current, next, schema } of planned) {
      const changed = next !== schema
      const version = changed
        ? await state.saveSchema(namespace, next as unknown as JsonValue, { fence: lease.token })
        : current.version
      applied.push({ namespace, version, schema: next, changed })
    }
    return applied
  })
}

async function refuseMovesWhilePending(
  pipeline: PipelineHandle,
  changes: ReadonlyMap<string, SchemaChange>,
): Promise<void> {
  const moves = [...changes].filter(([, c]) => c.kind === 'rename' || c.kind === 'merge')
  if (moves.length === 0) return
  const pending = await summarisePending(pipeline)
  for (const [namespace] of moves) {
    const rows = pending.namespaces.get(namespace)?.rows ?? 0
    if (rows === 0) continue
    const fix =
      pipeline.settings.sinkEntry === undefined
        ? 'this pipeline has no data_sink, so they stay there: RESET PIPELINE and sync again to read them under the new names, or add the new column with metadata apply instead'
        : `land them first (skipprd sync -p ${pipeline.settings.name} --once), then try again`
    throw new SchemaChangeRefusedError(
      namespace,
      `${rows} rows of it read under the current names are pending in the WAL and would land under the old name; ${fix}`,
    )
  }
}

/** One line per namespace: what was saved. */
export function describeApplied(pipeline: string, applied: readonly AppliedChange[]): string {
  return applied
    .map(({ namespace, version, schema, changed }) =>
      changed
        ? `Schema of ${pipeline}.${namespace} saved as version ${version} (${schema.fields.length} fields): the next sync reads the source by it.`
        : `Schema of ${pipeline}.${namespace} unchanged (version ${version}).`,
    )
    .join('\n')
}

/**
 * What an ALTER TABLE does in the pipeline's destinations on the next sync, one line per sink: a
 * RENAME is applied by a sink that `renamesColumns`; a DROP or MERGE never is, since landed data is
 * never deleted; a widened type is applied as any schema change is (no line).
 */
export function describeDestinations(
  change: SchemaChange,
  sinks: readonly { readonly entry: string; readonly definition: SinkDefinition }[],
): string[] {
  return sinks.flatMap(({ entry, definition }) => {
    const sink = `${entry} (${definition.type})`
    switch (change.kind) {
      case 'rename':
        return definition.renamesColumns
          ? [`${sink} renames column '${change.column}' to '${change.to}' on the next sync.`]
          : [
              `${sink} does not rename columns: what it landed so far keeps '${change.column}', rows from the next sync land as '${change.to}'.`,
            ]
      case 'drop':
        return [
          `${sink} keeps what it landed so far with '${change.column}' (landed data is never deleted); rows from the next sync have no value for it: drop it there yourself if you want it gone.`,
        ]
      case 'merge':
        return [
          `${sink} keeps what it landed so far with '${change.column}' (landed data is never deleted); rows from the next sync carry its values in '${change.into}'.`,
        ]
      default:
        return []
    }
  })
}
