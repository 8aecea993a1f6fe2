/**
 * `discover`: connects to a pipeline's source, reads its namespaces and schemas, and saves them
 * as the pipeline's schema (new namespaces as version 1, changed ones as a new version that only
 * adds fields and widens types). Takes no writer lease: schema versions are immutable keys, so a
 * concurrent sync cannot lose one.
 */
import { randomUUID } from 'node:crypto'
import { addedFields, type NamespaceSchema } from '@skippr/connector-api'
import type { JsonValue, PipelineState } from '@skippr/state'
import type { Logger } from 'pino'
import { SourceFailedError } from '../errors.js'
import { connectorLogger } from '../logging.js'
import { evolveSaved } from '../schema/applied.js'
import type { ResolvedPipeline } from './session.js'
import { openPipelineStore } from './state-store.js'

/** Every event names its pipeline and the run, as sync's events do (`run_id`). */
export type DiscoverEvent = { readonly pipeline: string; readonly runId: string } & (
  | { readonly type: 'discover_start' }
  | { readonly type: 'namespace_discovered'; readonly namespace: string; readonly fieldCount: number }
  | { readonly type: 'schema_evolved'; readonly namespace: string; readonly fieldsAdded: number }
  | {
      readonly type: 'discover_complete'
      readonly namespaces: number
      readonly totalFields: number
      readonly elapsedMs: number
    }
)

export interface DiscoverOptions {
  readonly pipeline: ResolvedPipeline
  readonly configDir: string
  readonly logger: Logger
  readonly listener: (event: DiscoverEvent) => void
}

export async function discoverPipeline(options: DiscoverOptions): Promise<NamespaceSchema[]> {
  const { settings, source: resolved } = options.pipeline
  const pipeline = settings.name
  const started = Date.now()
  const runId = randomUUID()
  const logger = options.logger.child({ pipeline, run_id: runId })
  options.listener({ type: 'discover_start', pipeline, runId })
  const store = await openPipelineStore(settings)
  try {
    const state = store.pipeline(pipeline)
    const context = {
      configDir: options.configDir,
      dataDir: settings.dataDir,
      pipeline,
      logger: connectorLogger(logger),
    }
    let found: NamespaceSchema[]
    try {
      const source = await resolved.definition.create(resolved.config, context)
      try {
        found = await source.discover()
      } finally {
        await source.close()
      }
    } catch (error) {
      throw new SourceFailedError(pipeline, error)
    }
    const saved = await Promise.all(found.map(async (schema) => save(state, schema)))
    for (const { schema, previous } of saved) {
      if (!previous) {
        logger.info(
          { namespace: schema.namespace, field_count: schema.fields.length },
          'namespace discovered',
        )
        options.listener({
          type: 'namespace_discovered',
          pipeline,
          runId,
          namespace: schema.namespace,
          fieldCount: schema.fields.length,
        })
      } else if (previous !== schema) {
        const fieldsAdded = addedFields(previous, schema).length
        logger.info({ namespace: schema.namespace, fields_added: fieldsAdded }, 'schema evolved')
        options.listener({
          type: 'schema_evolved',
          pipeline,
          runId,
          namespace: schema.namespace,
          fieldsAdded,
        })
      }
    }
    const schemas = saved.map((s) => s.schema)
    options.listener({
      type: 'discover_complete',
      pipeline,
      runId,
      namespaces: schemas.length,
      totalFields: schemas.reduce((sum, s) => sum + s.fields.length, 0),
      elapsedMs: Date.now() - started,
    })
    return schemas
  } finally {
    await store.close()
  }
}

/** Saves the discovered schema merged into the saved one; `previous` is undefined for a new namespace. */
async function save(
  state: PipelineState,
  discovered: NamespaceSchema,
): Promise<{ schema: NamespaceSchema; previous: NamespaceSchema | undefined }> {
  const previous = (await state.getSchema(discovered.namespace))?.schema as NamespaceSchema | undefined
  const schema = previous ? evolveSaved(previous, discovered) : discovered
  if (schema !== previous) await state.saveSchema(schema.namespace, schema as unknown as JsonValue)
  return { schema, previous }
}
