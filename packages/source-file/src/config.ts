import { crossFieldCheck, FIELD_TYPES, type FieldProblem } from '@skippr/connector-api'
import * as v from 'valibot'
import { defaultNamespace } from './match.js'

/**
 * Small beside the WAL buffer's 10 MB threshold: a batch is flushed by the chunk that reaches it, so it
 * overshoots by at most one chunk.
 */
export const DEFAULT_CHUNK_BYTES = 1024 * 1024
/**
 * How long a file's last record without its newline must stay as it is before it is taken as
 * whole: long enough for a writer between two writes of one line, short enough for `sync --once`.
 */
export const DEFAULT_SETTLE_SECONDS = 1

const field = v.strictObject({
  name: v.pipe(
    v.string(),
    v.minLength(1),
    v.description('Column name (CSV: as in the header row) or JSON key.'),
  ),
  type: v.pipe(
    v.picklist(FIELD_TYPES),
    v.description('Field type: string, int, long, double, boolean, date, timestamp or json.'),
  ),
  nullable: v.optional(v.pipe(v.boolean(), v.description('Whether the field may be null (default true).'))),
})

export const fileConfig = v.pipe(
  v.strictObject({
    path: v.pipe(
      v.string(),
      v.minLength(1),
      v.description(
        'A file or a glob (`data/*.csv`, `logs/**/*.jsonl`), relative to the directory of skippr.yml.',
      ),
    ),
    format: v.pipe(
      v.picklist(['csv', 'jsonl', 'parquet']),
      v.description('`csv` (RFC 4180), `jsonl` (one JSON object per line) or `parquet`.'),
    ),
    header: v.optional(
      v.pipe(
        v.boolean(),
        v.description('CSV only: whether the first row of each file names the columns (default true).'),
      ),
    ),
    namespace: v.optional(
      v.pipe(
        v.string(),
        v.minLength(1),
        v.description(
          'Namespace (table) for the rows of every matched file (default: the file name without extension).',
        ),
      ),
    ),
    schema: v.optional(
      v.pipe(
        v.array(field),
        v.minLength(1),
        v.description(
          'Fields in column order; replaces type inference. CSV headers must list the same names in order.',
        ),
      ),
    ),
    chunk_bytes: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(4096),
        v.maxValue(256 * 1024 * 1024),
        v.description(
          `Bytes read per block; a chunk holds the whole records of one block (Parquet: about this many bytes of rows as CSV; default ${DEFAULT_CHUNK_BYTES}).`,
        ),
      ),
    ),
    settle_seconds: v.optional(
      v.pipe(
        v.number(),
        v.minValue(0),
        v.maxValue(3600),
        v.description(
          `CSV and JSON lines: a last record without its final newline is read once the file has not changed for this long (default ${DEFAULT_SETTLE_SECONDS}); sync --once waits for it.`,
        ),
      ),
    ),
  }),
  crossFieldCheck((config) => {
    const problems: FieldProblem[] = []
    if (config.format !== 'csv' && config.header !== undefined)
      problems.push({ path: ['header'], message: 'header applies to csv only: remove it' })
    if (config.format === 'parquet' && config.settle_seconds !== undefined)
      problems.push({
        path: ['settle_seconds'],
        message: 'a Parquet file is read whole once written: remove settle_seconds',
      })
    if (config.format === 'parquet' && config.schema !== undefined) {
      problems.push({
        path: ['schema'],
        message: 'a Parquet file declares its own columns and types: remove schema',
      })
    }
    if (config.namespace === undefined && defaultNamespace(config.path) === undefined) {
      problems.push({
        path: ['namespace'],
        message: `no namespace can be derived from the path ${config.path}: set namespace`,
      })
    }
    const names = new Set<string>()
    for (const [i, f] of (config.schema ?? []).entries()) {
      if (names.has(f.name))
        problems.push({ path: ['schema', i, 'name'], message: `duplicate field ${f.name}` })
      names.add(f.name)
    }
    return problems
  }),
)

export type FileConfig = v.InferOutput<typeof fileConfig>
