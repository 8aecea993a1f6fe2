/**
 * Errors of `skipprd query`, `df` and `connect`. Each has a stable `code`; match with `hasCode`.
 * (An unknown pipeline is the runner's `PipelineNotFoundError`, `SKIPPR_PIPELINE_NOT_FOUND`.)
 */
import { SkipprError } from '@skippr/connector-api'

export const PIPELINE_BUSY = 'SKIPPR_PIPELINE_BUSY'
export const NAMESPACE_NOT_FOUND = 'SKIPPR_NAMESPACE_NOT_FOUND'
export const COLUMNS_DIFFER = 'SKIPPR_COLUMNS_DIFFER'
export const QUERY_FAILED = 'SKIPPR_QUERY_FAILED'
export const CONNECT_INVALID = 'SKIPPR_CONNECT_INVALID'
export const BATCH_ASIDE_REFUSED = 'SKIPPR_BATCH_ASIDE_REFUSED'

/** DEADLETTER / DISCARD BATCH cannot run as asked; nothing was changed. */
export class BatchAsideError extends SkipprError {
  constructor(message: string) {
    super(BATCH_ASIDE_REFUSED, message)
  }
}

/** RESET / DROP PIPELINE while a sync holds the writer lease. */
export class PipelineBusyError extends SkipprError {
  constructor(
    statement: string,
    pipeline: string,
    holder: { owner: string; heartbeatAgeMs: number },
    ttlMs: number,
  ) {
    super(
      PIPELINE_BUSY,
      `${statement} refused: a sync is writing pipeline '${pipeline}' (writer lease held by '${holder.owner}', ` +
        `last heartbeat ${holder.heartbeatAgeMs} ms ago). Stop that sync or let it finish, then run ${statement} ` +
        `again (a killed sync on this host does not hold it; one on another host holds it until ${Math.round(ttlMs / 1000)} s after its last heartbeat)`,
    )
  }
}

export class NamespaceNotFoundError extends SkipprError {
  constructor(pipeline: string, namespace: string, known: readonly string[]) {
    const hint =
      known.length > 0
        ? `its namespaces: ${known.join(', ')}`
        : 'it has no saved schema yet: run sync or discover first'
    super(NAMESPACE_NOT_FOUND, `Namespace '${namespace}' not found in pipeline '${pipeline}': ${hint}`)
  }
}

/** `df` without `--namespace` over namespaces whose columns are not the same. */
export class ColumnsDifferError extends SkipprError {
  constructor(pipeline: string, layouts: ReadonlyMap<string, readonly string[]>) {
    const described = [...layouts].map(([ns, columns]) => `${ns} (${columns.join(', ')})`).join('; ')
    super(
      COLUMNS_DIFFER,
      `pipeline '${pipeline}' has namespaces with different columns: ${described}. ` +
        'Pick one with --namespace <name>',
    )
  }
}

/** DuckDB refused or failed a statement: its message (with the position it points at), as DuckDB words it. */
export class QueryFailedError extends SkipprError {
  constructor(cause: unknown) {
    const message = cause instanceof Error ? cause.message : String(cause)
    super(QUERY_FAILED, message.replace(/^Failed to extract statements: /, '').trimEnd(), { cause })
  }
}

/** `skipprd connect` was given something it cannot write. */
export class ConnectInvalidError extends SkipprError {
  constructor(message: string) {
    super(CONNECT_INVALID, message)
  }
}
