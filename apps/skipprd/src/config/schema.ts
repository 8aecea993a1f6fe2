/**
 * The shape of skippr.yml, in the vendor's layout. Connector fields are `unknown` here: each
 * connector validates its own with `parseConnectorConfig` once its package is loaded.
 */
import * as v from 'valibot'

/** The sections of connector entries a pipeline names. */
export const SECTIONS = ['data_sources', 'data_sinks', 'deadletter_sinks'] as const
export type Section = (typeof SECTIONS)[number]
/** Every section of connector entries: `schema_sinks` entries are named by data_sinks entries, not by pipelines. */
export const CONNECTOR_SECTIONS = [...SECTIONS, 'schema_sinks'] as const
export type ConnectorSection = (typeof CONNECTOR_SECTIONS)[number]

/** The key of a data_sinks entry, beside its type key, that names its schema sink. */
export const SCHEMA_SINK_KEY = 'schema_sink'

const NAME = /^[A-Za-z0-9_-]+$/
const nameKey = v.pipe(v.string(), v.regex(NAME, 'use letters, digits, _ and - only'))

/** `{ Duckdb: { path: … } }`: exactly one connector type and its fields. */
export const connectorEntrySchema = v.pipe(
  v.record(v.string(), v.nullable(v.record(v.string(), v.unknown()))),
  v.check(
    (entry) => Object.keys(entry).length === 1,
    'an entry holds exactly one connector type, e.g. `Duckdb: { path: ./warehouse.duckdb }`',
  ),
)

/** A connector entry's type key and fields, as validated. */
export type ConnectorEntry = v.InferOutput<typeof connectorEntrySchema>

/** `{ Duckdb: { path: … }, schema_sink: schema_sinks.<name> }`: a connector entry, optionally naming its schema sink. */
export const dataSinkEntrySchema = v.pipe(
  v.objectWithRest(
    {
      [SCHEMA_SINK_KEY]: v.optional(
        v.pipe(
          v.string(),
          v.description(
            'Where the tables are created and evolved from the saved schema before data lands, as schema_sinks.<name>',
          ),
        ),
      ),
    },
    v.nullable(v.record(v.string(), v.unknown())),
  ),
  v.check(
    (entry) => Object.keys(entry).filter((key) => key !== SCHEMA_SINK_KEY).length === 1,
    'an entry holds exactly one connector type, e.g. `Duckdb: { path: ./warehouse.duckdb }`, and optionally `schema_sink: schema_sinks.<name>`',
  ),
)

export const pipelineSchema = v.strictObject({
  data_source: v.pipe(v.string(), v.description('The source entry, as data_sources.<name>')),
  data_sink: v.optional(
    v.pipe(
      v.string(),
      v.description('The destination entry, as data_sinks.<name>; without it data stays in the WAL'),
    ),
  ),
  deadletter_sink: v.optional(
    v.pipe(
      v.string(),
      v.description(
        'Where rows that cannot land go, as deadletter_sinks.<name>; without it they are counted and dropped',
      ),
    ),
  ),
  sync_frequency_seconds: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(0),
      v.description('Minimum time between runs when every pipeline is synced (default 900)'),
    ),
  ),
  data_dir: v.optional(
    v.pipe(v.string(), v.description("The pipeline's local working data (default DATA_DIR, else ./data)")),
  ),
  chaos_mode: v.optional(
    v.pipe(v.boolean(), v.description('SIGKILL the process at random points of a sync (testing only)')),
  ),
  buffer_threshold_bytes: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.description('Flush a batch at this many bytes (overrides BUFFER_THRESHOLD_BYTES)'),
    ),
  ),
  buffer_threshold_seconds: v.optional(
    v.pipe(
      v.number(),
      v.gtValue(0),
      v.description('Flush a batch this old (overrides BUFFER_THRESHOLD_SECONDS)'),
    ),
  ),
  wal_max_total_bytes: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.description(
        "Cap on the pipeline's WAL files: reading waits there for landed batches (overrides WAL_MAX_TOTAL_BYTES)",
      ),
    ),
  ),
})

export const skipprSectionSchema = v.strictObject({
  workspace: v.optional(v.pipe(v.string(), v.description('Namespace for saved state (default "default")'))),
  store: v.optional(
    v.strictObject({
      type: v.optional(
        v.pipe(v.string(), v.description('State store type: sled (embedded, the default) or dynamodb')),
      ),
      name: v.optional(v.pipe(v.string(), v.description('Table name for the dynamodb state store'))),
      endpoint: v.optional(
        v.pipe(
          v.string(),
          v.description(
            'DynamoDB endpoint URL, when not the region default (else AWS_ENDPOINT_URL_DYNAMODB)',
          ),
        ),
      ),
      create: v.optional(
        v.pipe(
          v.boolean(),
          v.description("Create the dynamodb store's table when it is missing (--create-store)"),
        ),
      ),
    }),
  ),
  wal_s3_bucket: v.optional(
    v.pipe(
      v.string(),
      v.description('WAL bucket for WAL_STORAGE=s3, optionally with a prefix: bucket/prefix'),
    ),
  ),
  tenant: v.optional(
    v.pipe(v.string(), v.description("The vendor's cloud tenant: kept for its tools, unused by skipprd")),
  ),
  storage_mode: v.optional(
    v.pipe(
      v.string(),
      v.description(
        "The vendor's cloud storage mode: kept for its tools, unused by skipprd (see WAL_STORAGE)",
      ),
    ),
  ),
  wal_s3_endpoint: v.optional(
    v.pipe(
      v.string(),
      v.description('S3 endpoint URL for the WAL, when not the region default (else AWS_ENDPOINT_URL_S3)'),
    ),
  ),
})

/**
 * Top-level sections of the vendor's files that skipprd has no use for (its dbt runs, Vector
 * sources): accepted, so such a file keeps working, and ignored.
 */
export const IGNORED_SECTIONS = ['dbt', 'vector_sources'] as const

/** Names skipprd uses itself, in data directories and as query schemas: no pipeline may take one. */
export const RESERVED_PIPELINE_NAMES = ['deadletters', 'wal', '_skippr', 'skippr', 'metadata'] as const

const ignoredSection = v.optional(v.pipe(v.unknown(), v.description('Accepted and ignored by skipprd')))

export const fileSchema = v.strictObject({
  skippr: v.optional(skipprSectionSchema),
  data_sources: v.optional(v.record(nameKey, connectorEntrySchema)),
  data_sinks: v.optional(v.record(nameKey, dataSinkEntrySchema)),
  deadletter_sinks: v.optional(v.record(nameKey, connectorEntrySchema)),
  schema_sinks: v.optional(
    v.pipe(
      v.record(nameKey, connectorEntrySchema),
      v.description(
        'Sinks whose tables a data sink keeps created and evolved from the saved schema (its schema_sink key)',
      ),
    ),
  ),
  pipelines: v.optional(v.record(nameKey, pipelineSchema)),
  dbt: ignoredSection,
  vector_sources: ignoredSection,
})

/**
 * The validated file. Its data_sinks entries hold their connector alone, as every other section's do;
 * their `schema_sink:` references are set apart in `schema_sink_of`.
 */
export type FileShape = Omit<v.InferOutput<typeof fileSchema>, 'data_sinks'> & {
  data_sinks?: Record<string, ConnectorEntry>
  /** data_sinks entry name → its `schema_sink:` reference, `schema_sinks.<name>`. */
  schema_sink_of?: Record<string, string>
}
export type PipelineShape = v.InferOutput<typeof pipelineSchema>
