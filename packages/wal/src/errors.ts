/**
 * Every error @skippr/wal throws. Identify an error by its `code`, never by `instanceof` (two copies of the
 * package in one process have different classes). Messages state the situation and the fix.
 */

export class WalError extends Error {
  readonly code: string
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

/** A setting (skippr.yml key or environment variable) has a bad value. One line, naming the setting. */
export class WalConfigError extends WalError {
  /** The YAML key or environment variable at fault, for callers that add the file and path. */
  readonly setting: string
  constructor(setting: string, message: string) {
    super('WAL_CONFIG_INVALID', message)
    this.setting = setting
  }
}

/** A batch handed to commit() (or a chunk handed to the buffer) cannot be stored as given. */
export class WalBatchInvalidError extends WalError {
  constructor(problem: string) {
    super('WAL_BATCH_INVALID', `cannot commit batch: ${problem}`)
  }
}

/** A frame was written by a newer @skippr/wal whose format this build does not know. */
export class WalFormatUnsupportedError extends WalError {
  readonly version: number
  constructor(version: number, supported: number) {
    super(
      'WAL_FORMAT_UNSUPPORTED',
      `WAL batch frame has format version ${version}, this @skippr/wal reads versions up to ${supported}; ` +
        'upgrade skipprd to the version that wrote this WAL',
    )
    this.version = version
  }
}

/** The log holds bytes that are not a valid batch frame, or frames in an impossible order. */
export class WalCorruptError extends WalError {
  constructor(where: string, problem: string) {
    super(
      'WAL_CORRUPT',
      `WAL ${where} is corrupt: ${problem}; restore the WAL directory from backup, or RESET PIPELINE ` +
        '(the source is then read again from the start)',
    )
  }
}

/** markLanded() named a batch that is not the oldest unlanded one: landing must follow commit order. */
export class WalLandOrderError extends WalError {
  constructor(got: string, expected: string) {
    super(
      'WAL_LAND_OUT_OF_ORDER',
      `markLanded(${got}) but the oldest unlanded batch is ${expected}; land batches in the order pending() ` +
        'yields them',
    )
  }
}

/** The WAL was closed (or reset failed half-way); open it again. */
export class WalClosedError extends WalError {
  constructor(pipeline: string) {
    super('WAL_CLOSED', `the WAL of pipeline '${pipeline}' is closed; open it again with openWal()`)
  }
}

/**
 * The device holding the WAL is full, or a batch would leave less free than the WAL keeps for landing:
 * the batch is not committed (its rows are read again by the next run). `withOutcome` adds what became
 * of the batches committed before it, for the run's last line.
 */
export class WalDiskFullError extends WalError {
  readonly pipeline: string
  readonly dataDir: string
  readonly detail: string
  constructor(
    pipeline: string,
    dataDir: string,
    detail: string,
    options?: { cause?: unknown; outcome?: string },
  ) {
    const outcome = options?.outcome === undefined ? '' : ` — ${options.outcome}`
    super(
      'WAL_DISK_FULL',
      `pipeline '${pipeline}': the disk holding ${dataDir} is full: ${detail}; reading stopped at the last ` +
        'committed batch. ' +
        `Free space (or set WAL_MAX_TOTAL_BYTES below the free space, so reading waits instead) and run ` +
        `sync again${outcome}`,
      options,
    )
    this.pipeline = pipeline
    this.dataDir = dataDir
    this.detail = detail
  }

  withOutcome(outcome: string): WalDiskFullError {
    return new WalDiskFullError(this.pipeline, this.dataDir, this.detail, { cause: this.cause, outcome })
  }
}

/**
 * A commit found the WAL at WAL_MAX_TOTAL_BYTES where waiting cannot help: nothing lands its batches
 * (a pipeline without a destination), or the batch alone does not fit.
 */
export class WalFullError extends WalError {
  constructor(problem: string, fix: string) {
    super('WAL_FULL', `${problem}: ${fix}`)
  }
}
