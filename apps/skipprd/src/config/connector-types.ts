/**
 * The connector types that exist: one package each in this repository (`@skippr/source-sample`
 * is `Sample`), published with skipprd or on their own. A type outside these lists loads when a
 * package of its name is installed beside the config file; otherwise it is a typo, and the
 * message offers these instead of an install command for a package nobody publishes.
 */
export const CONNECTOR_TYPES = {
  source: ['File', 'HttpServer', 'Postgres', 'Sample', 'Websocket'],
  sink: [
    'Amqp',
    'AzureBlob',
    'Bigquery',
    'Clickhouse',
    'Duckdb',
    'File',
    'Postgres',
    'S3',
    'Sftp',
    'Snowflake',
    'Stdout',
  ],
} as const satisfies Record<'source' | 'sink', readonly string[]>

export type ConnectorKind = keyof typeof CONNECTOR_TYPES
