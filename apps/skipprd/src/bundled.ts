/** The connector packages published with skipprd (its dependencies): their fields are in skippr.schema.json. */
export const BUNDLED_SOURCES = [
  '@skippr/source-sample',
  '@skippr/source-file',
  '@skippr/source-postgres',
] as const
export const BUNDLED_SINKS = [
  '@skippr/sink-duckdb',
  '@skippr/sink-postgres',
  '@skippr/sink-file',
  '@skippr/sink-stdout',
] as const
