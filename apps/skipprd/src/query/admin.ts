/**
 * The admin statements. ENABLE/DISABLE flip the flag `sync` checks before it starts. RESET and
 * DROP delete what a running sync is using, so they take the pipeline's writer lease themselves
 * for the moment they run — without waiting: if a sync holds it, the statement is refused and
 * nothing is touched — and a sync that starts meanwhile waits for them. SHOW and SCHEMA DUMP read
 * only; LOAD SCHEMA and ALTER TABLE change the saved schema through schema/apply.ts, under the lease too.
 */
import { rm, writeFile } from 'node:fs/promises'
import { batchKey, type NamespaceSchema } from '@skippr/connector-api'
import type { LandingFailure, NamespaceCounts } from '@skippr/state'
import { openWal, removeDiskReserve } from '@skippr/wal'
import { walBackend } from '../runner/wal-backend.js'
import { applySchemaChanges, describeApplied, describeDestinations } from '../schema/apply.js'
import { namespaceDocument, pipelineDocument } from '../schema/file.js'
import { readSchemaFile, schemaFileChanges } from '../schema/load.js'
import { setBatchAside } from './batch-aside.js'
import type { PipelineCatalog, PipelineHandle } from './catalog.js'
import { NamespaceNotFoundError } from './errors.js'
import { type PendingBatch, summarisePending } from './pending.js'
import { type Cell, rowsOf, type StatementResult } from './result.js'
import { cacheFile } from './snapshot.js'
import { type AdminStatement, describeAdmin } from './statements.js'
import { withLease } from './writer-lease.js'

export async function runAdmin(
  statement: AdminStatement,
  catalog: PipelineCatalog,
): Promise<StatementResult> {
  const pipeline = await catalog.open(statement.pipeline)
  const name = statement.pipeline
  switch (statement.kind) {
    case 'enable':
      await pipeline.state.setEnabled(true)
      return message(`Pipeline '${name}' enabled.`)
    case 'disable':
      await pipeline.state.setEnabled(false)
      return message(`Pipeline '${name}' disabled: sync skips it until ENABLE PIPELINE ${name}.`)
    case 'reset':
      await withLease(pipeline, describeAdmin(statement), () => resetPipeline(pipeline))
      return message(
        `Pipeline '${name}' reset: its WAL and resume position are deleted; the next sync reads the source from the start.`,
      )
    case 'drop':
      await withLease(pipeline, describeAdmin(statement), async () => {
        await resetPipeline(pipeline)
        await removeDiskReserve(pipeline.settings.dataDir, name)
        await pipeline.state.drop()
        await rm(cacheFile(pipeline.settings), { force: true })
        await rm(`${cacheFile(pipeline.settings)}.wal`, { force: true })
      })
      return message(
        `Pipeline '${name}' dropped: its WAL, resume position, saved schemas and flags are deleted.`,
      )
    case 'show':
      return { kind: 'document', value: await describePipeline(pipeline) }
    case 'stats':
      return stats(pipeline, statement.namespace)
    case 'schema-dump':
      return message(await dumpSchema(pipeline, statement.namespace, statement.path))
    case 'schema-load': {
      const changes = schemaFileChanges(
        await readSchemaFile(statement.path),
        statement.path,
        statement.namespace,
      )
      return message(
        describeApplied(name, await applySchemaChanges(pipeline, changes, describeAdmin(statement))),
      )
    }
    case 'alter': {
      const changes = new Map([[statement.namespace, statement.change]])
      const applied = await applySchemaChanges(pipeline, changes, describeAdmin(statement))
      const sinks = applied.some((a) => a.changed) ? await catalog.tableSinks(pipeline.settings) : []
      return message(
        [describeApplied(name, applied), ...describeDestinations(statement.change, sinks)].join('\n'),
      )
    }
    case 'deadletter':
    case 'discard': {
      let text = ''
      await withLease(pipeline, describeAdmin(statement), async (lease) => {
        text = await setBatchAside(statement.kind, statement.seq, pipeline, catalog, lease)
      })
      return message(text)
    }
  }
}

function message(text: string): StatementResult {
  return { kind: 'message', text }
}

/** Writes the saved schema of one namespace, or of all, to `path` in the vendor's shape (schema/file.ts). */
async function dumpSchema(
  pipeline: PipelineHandle,
  namespace: string | undefined,
  path: string,
): Promise<string> {
  const name = pipeline.settings.name
  const schemas = (await pipeline.state.listSchemas()).map((s) => s.schema as unknown as NamespaceSchema)
  if (namespace === undefined) {
    await writeFile(path, `${JSON.stringify(pipelineDocument(schemas), null, 2)}\n`)
    return `Schemas of ${name} (${schemas.length} namespace${schemas.length === 1 ? '' : 's'}) written to '${path}'.`
  }
  const schema = schemas.find((s) => s.namespace === namespace)
  if (!schema)
    throw new NamespaceNotFoundError(
      name,
      namespace,
      schemas.map((s) => s.namespace),
    )
  await writeFile(path, `${JSON.stringify(namespaceDocument(schema), null, 2)}\n`)
  return `Schema of ${name}.${namespace} (${schema.fields.length} fields) written to '${path}'.`
}

/** Deletes every batch in the WAL and the resume position (the WAL starts a new epoch), and the counters. */
async function resetPipeline(pipeline: PipelineHandle): Promise<void> {
  const { settings, state } = pipeline
  const wal = await openWal({
    pipeline: settings.name,
    dataDir: settings.dataDir,
    backend: walBackend(settings, pipeline.state),
    // Reset saves `undefined`: forgetting the position. The lease keeps any other writer out meanwhile.
    positions: { load: () => state.getResumeOffset(), save: () => state.reset() },
  })
  try {
    await wal.reset()
  } finally {
    await wal.close()
  }
}

async function describePipeline(pipeline: PipelineHandle): Promise<unknown> {
  const { settings, state } = pipeline
  const [enabled, lease, lastRun, schemas, resume, pending, failures] = await Promise.all([
    state.isEnabled(),
    state.getLeaseInfo(),
    state.getLastRun(),
    state.listSchemas(),
    state.getResumeOffset(),
    summarisePending(pipeline),
    state.landingFailures.read(),
  ])
  const running = lease?.live === true
  return {
    pipeline: settings.name,
    status: enabled ? 'enabled' : 'disabled',
    running,
    writer: running ? { owner: lease.owner, heartbeat_at: lease.heartbeatAt.toISOString() } : null,
    last_run: lastRun?.toISOString() ?? null,
    data_source: `data_sources.${settings.sourceEntry}`,
    data_sink: settings.sinkEntry === undefined ? null : `data_sinks.${settings.sinkEntry}`,
    deadletter_sink:
      settings.deadletterSinkEntry === undefined ? null : `deadletter_sinks.${settings.deadletterSinkEntry}`,
    data_dir: settings.dataDir,
    namespaces: schemas.map(({ namespace, version, schema }) => {
      const { fields, primaryKey } = schema as unknown as NamespaceSchema
      return {
        namespace,
        schema_version: version,
        primary_key: primaryKey ?? [],
        fields: fields.map((f) => ({ name: f.name, type: f.type, nullable: f.nullable ?? true })),
      }
    }),
    offsets: {
      // Where the next sync resumes: the newest committed batch's offset, else the landed position.
      committed: pending.lastOffset ?? resume ?? null,
      landed: resume ?? null,
    },
    wal: {
      epoch: pending.epoch ?? null,
      pending_batches: pending.batches,
      landed_seq: pending.landedSeq.toString(),
      pending: pendingBatches(pending.oldest, failures),
    },
  }
}

/**
 * The oldest pending batches with their failed landing attempts: the first is the one landing waits
 * on, and the one `DEADLETTER BATCH` / `DISCARD BATCH` can move aside.
 */
function pendingBatches(oldest: readonly PendingBatch[], failures: readonly LandingFailure[]): unknown[] {
  const failed = new Map(failures.map((f) => [`${f.epoch}/${f.seq}`, f]))
  return oldest.map(({ id, rows, namespaces }) => {
    const failure = failed.get(`${id.epoch}/${id.seq}`)
    return {
      batch: batchKey(id),
      seq: id.seq.toString(),
      rows,
      namespaces,
      attempts: failure?.attempts ?? 0,
      failing_since: failure?.firstFailedAt.toISOString() ?? null,
      failing_for_seconds: failure ? Math.round((Date.now() - failure.firstFailedAt.getTime()) / 1000) : null,
      last_error: failure?.lastError ?? null,
    }
  })
}

const STATS_HEADER = [
  'namespace',
  'rows_committed',
  'bytes_committed',
  'rows_landed',
  'bytes_landed',
  'rows_pending',
  'bytes_pending',
  'rows_deadlettered',
] as const

async function stats(pipeline: PipelineHandle, namespace: string | undefined): Promise<StatementResult> {
  const { settings, state } = pipeline
  const [schemas, counters, pending] = await Promise.all([
    state.listSchemas(),
    pipeline.state.counters.read(),
    summarisePending(pipeline),
  ])
  const known = [
    ...new Set([...schemas.map((s) => s.namespace), ...counters.keys(), ...pending.namespaces.keys()]),
  ].sort()
  if (namespace !== undefined && !known.includes(namespace))
    throw new NamespaceNotFoundError(settings.name, namespace, known)
  const rows: Cell[][] = (namespace === undefined ? known : [namespace]).map((ns) => {
    const counts: NamespaceCounts = counters.get(ns) ?? {
      committedRows: 0,
      committedBytes: 0,
      landedRows: 0,
      landedBytes: 0,
      deadletterRows: 0,
    }
    const waiting = pending.namespaces.get(ns) ?? { rows: 0, bytes: 0 }
    return [
      ns,
      ...[
        counts.committedRows,
        counts.committedBytes,
        counts.landedRows,
        counts.landedBytes,
        waiting.rows,
        waiting.bytes,
        counts.deadletterRows,
      ].map(String),
    ]
  })
  return rowsOf(
    STATS_HEADER,
    STATS_HEADER.map((h) => h !== 'namespace'),
    rows,
  )
}
