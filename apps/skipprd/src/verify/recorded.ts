/**
 * What a pipeline's state and WAL say, for `skipprd verify`: its namespaces with their saved
 * schemas (the primary key duplicates are looked for by), the counters (rows set aside), the rows
 * pending in the WAL and who holds the lease. Read as `skipprd query` reads: no lease, and an
 * embedded store the pipeline never created is not opened (opening would create it).
 */
import type { NamespaceSchema } from '@skippr/connector-api'
import type { LeaseInfo, NamespaceCounts } from '@skippr/state'
import type { Logger } from 'pino'
import type { ConfigFile } from '../config/load.js'
import type { PipelineSettings, RuntimeFlags } from '../config/settings.js'
import { PipelineCatalog } from '../query/catalog.js'
import { type PendingSummary, summarisePending } from '../query/pending.js'
import type { Redactor } from '../redact.js'
import { neverRanHere } from '../runner/state-store.js'

export interface Recorded {
  readonly schemas: ReadonlyMap<string, NamespaceSchema>
  readonly counters: ReadonlyMap<string, NamespaceCounts>
  readonly pending: Pick<PendingSummary, 'batches' | 'namespaces'>
  readonly lease: LeaseInfo | undefined
}

export interface StateEnvironment {
  readonly file: ConfigFile
  readonly flags: RuntimeFlags
  readonly cwd: string
  readonly logger: Logger
  readonly redactor: Redactor
}

const NOTHING_RECORDED: Recorded = {
  schemas: new Map(),
  counters: new Map(),
  pending: { batches: 0, namespaces: new Map() },
  lease: undefined,
}

export async function readRecorded(
  environment: StateEnvironment,
  settings: PipelineSettings,
): Promise<Recorded> {
  if (neverRanHere(settings)) return NOTHING_RECORDED
  const catalog = new PipelineCatalog(
    environment.file,
    environment.flags,
    environment.cwd,
    environment.logger,
    (secrets) => environment.redactor.add(secrets),
  )
  try {
    const handle = await catalog.open(settings.name)
    const { state } = handle
    const [lease, pending, counters, saved] = await Promise.all([
      state.getLeaseInfo(),
      summarisePending(handle),
      state.counters.read(),
      state.listSchemas(),
    ])
    const schemas = new Map(
      saved.map(({ namespace, schema }) => [namespace, schema as unknown as NamespaceSchema]),
    )
    return { schemas, counters, pending, lease }
  } finally {
    await catalog.close()
  }
}
