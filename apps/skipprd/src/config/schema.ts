/**
 * The shape of skippr.yml, in the vendor's layout. Connector fields are `unknown` here: each
 * connector validates its own with `parseConnectorConfig` once its package is loaded.
 */
import { z } from 'zod'

export const SECTIONS = ['data_sources', 'data_sinks'] as const
export type Section = (typeof SECTIONS)[number]

const NAME = /^[A-Za-z0-9_-]+$/
const nameKey = z.string().regex(NAME, 'use letters, digits, _ and - only')

/** `{ Duckdb: { path: … } }`: exactly one connector type and its fields. */
export const connectorEntrySchema = z
  .record(z.string(), z.record(z.string(), z.unknown()).nullable())
  .refine((entry) => Object.keys(entry).length === 1, {
    message: 'an entry holds exactly one connector type, e.g. `Duckdb: { path: ./warehouse.duckdb }`',
  })

export const pipelineSchema = z.strictObject({
  data_source: z.string().describe('The source entry, as data_sources.<name>'),
  data_sink: z
    .string()
    .optional()
    .describe('The destination entry, as data_sinks.<name>; without it data stays in the WAL'),
  sync_frequency_seconds: z
    .number()
    .int()
    .nonnegative()
    .optional()
    .describe('Minimum time between runs when every pipeline is synced (default 900)'),
  data_dir: z
    .string()
    .optional()
    .describe("The pipeline's local working data (default DATA_DIR, else ./data)"),
  chaos_mode: z
    .boolean()
    .optional()
    .describe('SIGKILL the process at random points of a sync (testing only)'),
  buffer_threshold_bytes: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Flush a batch at this many bytes (overrides BUFFER_THRESHOLD_BYTES)'),
  buffer_threshold_seconds: z
    .number()
    .positive()
    .optional()
    .describe('Flush a batch this old (overrides BUFFER_THRESHOLD_SECONDS)'),
})

export const skipprSectionSchema = z.strictObject({
  workspace: z.string().optional().describe('Namespace for saved state (default "default")'),
  store: z
    .strictObject({
      type: z.string().optional().describe('State store type: sled (embedded, the default)'),
      name: z.string().optional().describe('Table name for the dynamodb state store'),
    })
    .optional(),
  wal_s3_bucket: z.string().optional().describe('WAL bucket for WAL_STORAGE=s3'),
})

export const fileSchema = z.strictObject({
  skippr: skipprSectionSchema.optional(),
  data_sources: z.record(nameKey, connectorEntrySchema).optional(),
  data_sinks: z.record(nameKey, connectorEntrySchema).optional(),
  pipelines: z.record(nameKey, pipelineSchema).optional(),
})

export type FileShape = z.infer<typeof fileSchema>
export type PipelineShape = z.infer<typeof pipelineSchema>
