import { FIELD_TYPES } from '@skippr/connector-api'
import { z } from 'zod'
import { defaultNamespace } from './match.js'

/**
 * Small beside the WAL buffer's 10 MB threshold: a batch is flushed by the chunk that reaches it, so it
 * overshoots by at most one chunk.
 */
export const DEFAULT_CHUNK_BYTES = 1024 * 1024

const field = z.strictObject({
  name: z.string().min(1).describe('Column name (CSV: as in the header row) or JSON key.'),
  type: z
    .enum(FIELD_TYPES)
    .describe('Field type: string, int, long, double, boolean, date, timestamp or json.'),
  nullable: z.boolean().optional().describe('Whether the field may be null (default true).'),
})

export const fileConfig = z
  .strictObject({
    path: z
      .string()
      .min(1)
      .describe(
        'A file or a glob (`data/*.csv`, `logs/**/*.jsonl`), relative to the directory of skippr.yml.',
      ),
    format: z.enum(['csv', 'jsonl']).describe('`csv` (RFC 4180) or `jsonl` (one JSON object per line).'),
    header: z
      .boolean()
      .optional()
      .describe('CSV only: whether the first row of each file names the columns (default true).'),
    namespace: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Namespace (table) for the rows of every matched file (default: the file name without extension).',
      ),
    schema: z
      .array(field)
      .min(1)
      .optional()
      .describe(
        'Fields in column order; replaces type inference. CSV headers must list the same names in order.',
      ),
    chunk_bytes: z
      .number()
      .int()
      .min(4096)
      .max(256 * 1024 * 1024)
      .optional()
      .describe(
        `Bytes read per block; a chunk holds the whole records of one block (default ${DEFAULT_CHUNK_BYTES}).`,
      ),
  })
  .superRefine((config, ctx) => {
    if (config.format === 'jsonl' && config.header !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['header'], message: 'header applies to csv only: remove it' })
    }
    if (config.namespace === undefined && defaultNamespace(config.path) === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['namespace'],
        message: `no namespace can be derived from the path ${config.path}: set namespace`,
      })
    }
    const names = new Set<string>()
    for (const [i, f] of (config.schema ?? []).entries()) {
      if (names.has(f.name)) {
        ctx.addIssue({ code: 'custom', path: ['schema', i, 'name'], message: `duplicate field ${f.name}` })
      }
      names.add(f.name)
    }
  })

export type FileConfig = z.infer<typeof fileConfig>
