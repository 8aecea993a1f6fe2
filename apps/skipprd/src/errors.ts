/**
 * skipprd's errors. Each carries a stable `code` (match with `hasCode`, never `instanceof`) and a
 * one-line message that states the situation and the fix. Configuration problems reuse
 * connector-api's `ConfigError` (`SKIPPR_CONFIG_INVALID`), so a connector's own validation error
 * and the runner's read the same way.
 */
import { type RefusedRow, SkipprError } from '@skippr/connector-api'

export const CONFIG_NOT_FOUND = 'SKIPPR_CONFIG_NOT_FOUND'
export const ENV_NOT_SET = 'SKIPPR_ENV_NOT_SET'
export const CONNECTOR_MISSING = 'SKIPPR_CONNECTOR_MISSING'
export const WAL_STORAGE_INVALID = 'SKIPPR_WAL_STORAGE_INVALID'
export const WAL_STORAGE_UNAVAILABLE = 'SKIPPR_WAL_STORAGE_UNAVAILABLE'
export const WAL_STORAGE_REFUSES_SINK = 'SKIPPR_WAL_STORAGE_REFUSES_SINK'
export const PIPELINE_NOT_FOUND = 'SKIPPR_PIPELINE_NOT_FOUND'
export const LANDING_INCOMPLETE = 'SKIPPR_LANDING_INCOMPLETE'
export const BATCH_REJECTED = 'SKIPPR_BATCH_REJECTED'
export const SOURCE_FAILED = 'SKIPPR_SOURCE_FAILED'
export const SCHEMA_SINK_FAILED = 'SKIPPR_SCHEMA_SINK_FAILED'

/** No config file where skipprd looked. */
export class ConfigNotFoundError extends SkipprError {
  constructor(looked: string) {
    super(CONFIG_NOT_FOUND, `${looked}: create skippr.yml there or pass --config <path>`)
  }
}

/** A `${NAME}` reference whose variable has no value (the seed's wording). */
export class EnvNotSetError extends SkipprError {
  readonly variable: string
  constructor(where: string, variable: string) {
    super(ENV_NOT_SET, `${where}: \${${variable}}: that environment variable is not set`)
    this.variable = variable
  }
}

/**
 * A `${NAME}` reference whose variable is set but empty: no field takes an empty value on purpose,
 * and the connector's own check would say "expected length >= 1" without naming the variable.
 */
export class EnvEmptyError extends SkipprError {
  readonly variable: string
  constructor(where: string, variable: string) {
    super(
      ENV_NOT_SET,
      `${where}: \${${variable}}: that environment variable is empty: give it a value (export ${variable}=…, or in .env beside the config file)`,
    )
    this.variable = variable
  }
}

/** The package for a connector type (or a state store type) is not installed. */
export class ConnectorMissingError extends SkipprError {
  readonly packageName: string
  /** `what`: what needs it, e.g. `connector type Duckdb`. */
  constructor(where: string, what: string, packageName: string, cause?: unknown) {
    super(
      CONNECTOR_MISSING,
      `${where}: ${what} needs the package ${packageName}: install it with \`pnpm add ${packageName}\` (or npm install ${packageName}) beside skippr.yml`,
      { cause },
    )
    this.packageName = packageName
  }
}

export class WalStorageInvalidError extends SkipprError {
  constructor(value: string) {
    super(WAL_STORAGE_INVALID, `WAL_STORAGE=${value} is not a WAL backend: use disk, s3 or clustered`)
  }
}

export class WalStorageUnavailableError extends SkipprError {
  constructor(message: string) {
    super(WAL_STORAGE_UNAVAILABLE, message)
  }
}

/** A clustered WAL behind a destination whose retries could duplicate rows. */
export class WalStorageRefusesSinkError extends SkipprError {
  constructor(where: string, type: string, guarantee: string) {
    super(
      WAL_STORAGE_REFUSES_SINK,
      `WAL_STORAGE=clustered accepts only destinations whose retries cannot duplicate rows (exactly-once, overwrite-on-retry): ${where} (${type}) is ${guarantee}; use WAL_STORAGE=disk for it, or another destination`,
    )
  }
}

export class PipelineNotFoundError extends SkipprError {
  constructor(name: string, file: string, known: readonly string[]) {
    const hint = known.length > 0 ? `pipelines in it: ${known.join(', ')}` : 'it defines no pipelines'
    super(PIPELINE_NOT_FOUND, `Pipeline '${name}' not found in ${file}: ${hint}`)
  }
}

/** `--once` ended with committed batches that did not land: they stay in the WAL. */
export class LandingIncompleteError extends SkipprError {
  readonly pendingBatches: number
  constructor(pipeline: string, pendingBatches: number, seconds: number, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause)
    super(
      LANDING_INCOMPLETE,
      `pipeline '${pipeline}': ${pendingBatches} committed batch(es) could not land within ${seconds} s (${reason}); they stay in the WAL: retry later`,
      { cause },
    )
    this.pendingBatches = pendingBatches
  }
}

/** The destination refused a batch for good (`fatal`); the batch stays in the WAL. */
export class BatchRejectedError extends SkipprError {
  constructor(pipeline: string, batch: string, cause: Error) {
    const seq = BigInt(batch.slice(batch.lastIndexOf('/') + 1))
    super(
      BATCH_REJECTED,
      `pipeline '${pipeline}': the destination rejected batch ${batch}: ${cause.message}. The batch stays in the WAL; fix the destination and run sync again, or set the batch aside without re-reading the source: skipprd query --sql "DEADLETTER BATCH ${seq} IN PIPELINE ${pipeline}" (SHOW PIPELINE ${pipeline} lists the pending batches)`,
      { cause },
    )
  }
}

export const REFUSED_AGAIN = 'SKIPPR_REFUSED_AGAIN'

/** After its refused rows were set aside, the destination refused more rows of the same batch. */
export class RefusedAgainError extends SkipprError {
  constructor(pipeline: string, batch: string, rows: readonly RefusedRow[]) {
    super(
      REFUSED_AGAIN,
      `pipeline '${pipeline}': the destination refused rows of batch ${batch} it had not named with the others (${describeRows(rows)}); its sink must name every refused row at once. The batch stays in the WAL; report this with the log`,
    )
  }
}

export const DEADLETTERS_REFUSED = 'SKIPPR_DEADLETTERS_REFUSED'

/** The deadletter sink refused deadletters: they cannot be set aside anywhere else. */
export class DeadlettersRefusedError extends SkipprError {
  constructor(pipeline: string, batch: string, rows: readonly RefusedRow[]) {
    super(
      DEADLETTERS_REFUSED,
      `pipeline '${pipeline}': the deadletter sink refused the deadletters of batch ${batch} (${describeRows(rows)}). The batch stays in the WAL; fix the deadletter sink's table and run sync again`,
    )
  }
}

function describeRows(rows: readonly RefusedRow[]): string {
  const first = rows[0]
  return first ? `${rows.length} row(s), the first: ${first.error}` : 'no rows named'
}

export class SourceFailedError extends SkipprError {
  constructor(pipeline: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause)
    super(
      SOURCE_FAILED,
      `pipeline '${pipeline}': the source failed: ${reason}. Committed batches are kept; run sync again`,
      { cause },
    )
  }
}

/**
 * The schema sink could not create or evolve a namespace's table. The data sink's batches wait for
 * it, so the landing's own error (retry budget spent, batch rejected) carries this message.
 */
export class SchemaSinkError extends SkipprError {
  constructor(entry: string, type: string, namespace: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause)
    super(
      SCHEMA_SINK_FAILED,
      `schema_sinks.${entry} (${type}) could not create or evolve the table of '${namespace}': ${reason}`,
      { cause },
    )
  }
}

export const INTERRUPTED = 'SKIPPR_INTERRUPTED'

/** `sync --once` was stopped (SIGINT/SIGTERM) before everything landed. */
export class InterruptedError extends SkipprError {
  constructor(pipeline: string, signal: string) {
    super(
      INTERRUPTED,
      `pipeline '${pipeline}': sync --once was stopped by ${signal} before every committed batch landed; they stay in the WAL: run sync again`,
    )
  }
}
