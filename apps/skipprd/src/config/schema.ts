/**
 * The shape of skippr.yml, in the vendor's layout. Connector fields are `unknown` here: each
 * connector validates its own with `parseConnectorConfig` once its package is loaded.
 */
import * as v from 'valibot'

export const SECTIONS = ['data_sources', 'data_sinks', 'deadletter_sinks'] as const
export type Section = (typeof SECTIONS)[number]

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
  data_sinks: v.optional(v.record(nameKey, connectorEntrySchema)),
  deadletter_sinks: v.optional(v.record(nameKey, connectorEntrySchema)),
  pipelines: v.optional(v.record(nameKey, pipelineSchema)),
  dbt: ignoredSection,
  vector_sources: ignoredSection,
})

export type FileShape = v.InferOutput<typeof fileSchema>
export type PipelineShape = v.InferOutput<typeof pipelineSchema>
