import type { ConfigSchema } from './config.js'
import type { Logger } from './logger.js'
import type { Meter } from './meter.js'

/** What the runner hands a connector when it creates one. */
export interface ConnectorContext {
  /** Directory of skippr.yml: relative paths in connector config resolve against it. */
  readonly configDir: string
  /** The pipeline's data directory (DATA_DIR or the pipeline's data_dir). */
  readonly dataDir: string
  readonly pipeline: string
  readonly logger: Logger
  /** Where the connector's own metrics go; absent when nothing serves metrics. */
  readonly meter?: Meter
}

/**
 * What every connector package exports (as `source` or `sink`). The runner finds it by type
 * name: `Duckdb` under `data_sinks` is `@skippr/sink-duckdb`.
 */
export interface ConnectorDefinition<Config> {
  /** The PascalCase type name used in skippr.yml, e.g. `Duckdb`. */
  readonly type: string
  /**
   * Validates the connector's fields; strict, so unknown keys fail. Any Standard Schema validator
   * will do; our connectors use valibot, whose issues give the most precise messages.
   */
  readonly config: ConfigSchema<Config>
  /** Fields that hold credentials: must be `${NAME}` references, never plaintext, never logged. */
  readonly secretFields?: readonly string[]
}
