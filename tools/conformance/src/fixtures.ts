/**
 * The data every suite lands: one schema with every field type, and rows chosen to break naive
 * encoders (NULL next to the empty string, quotes, commas, newlines, unicode, extremes).
 */
import type { BatchPart, Field, NamespaceSchema, RecordFormat, SinkBatch } from '@skippr/connector-api'
import { encodeCsv, encodeJsonl } from '@skippr/connector-api'

export type Row = Record<string, unknown>

export const ALL_TYPES_FIELDS: readonly Field[] = [
  { name: 'id', type: 'long', nullable: false },
  { name: 'name', type: 'string' },
  { name: 'qty', type: 'int' },
  { name: 'price', type: 'double' },
  { name: 'active', type: 'boolean' },
  { name: 'day', type: 'date' },
  { name: 'at', type: 'timestamp' },
  { name: 'doc', type: 'json' },
  { name: 'note', type: 'string' },
]

export function allTypesSchema(namespace: string): NamespaceSchema {
  return { namespace, fields: ALL_TYPES_FIELDS, primaryKey: ['id'] }
}

/** Rows with awkward values; `idBase` keeps ids distinct between batches. */
export function trickyRows(idBase = 0): Row[] {
  return [
    {
      id: idBase + 1,
      name: 'plain',
      qty: 1,
      price: 1.5,
      active: true,
      day: '2024-02-29',
      at: '2024-02-29T12:34:56.789Z',
      doc: { a: 1, b: [true, null, 'x'] },
      note: 'hello',
    },
    { id: idBase + 2 },
    {
      id: idBase + 3,
      name: '',
      qty: 0,
      price: 0,
      active: false,
      day: '1970-01-01',
      at: '1970-01-01T00:00:00.000Z',
      doc: [],
      note: 'comma, "double quotes", \'single\'\nnew line\r\nCRLF\ttab',
    },
    {
      id: idBase + 4,
      name: 'Zürich — 東京 🚲',
      qty: -2147483648,
      price: -1234567.25,
      active: true,
      day: '2099-12-31',
      at: '2038-01-19T03:14:08.001Z',
      doc: { 'key with "quotes"': 'ünï', nested: { n: -1.5 } },
      note: 'NULL',
    },
    {
      id: idBase + 5,
      name: '  padded  ',
      qty: 2147483647,
      price: 1e-7,
      active: null,
      day: null,
      at: '2000-06-15T23:59:59.999Z',
      doc: 42,
      note: '\\N',
    },
  ]
}

/** A large-enough id that must survive as a long (above 2^31, below 2^53). */
export const BIG_ID = 9_007_199_254_740_991

export interface PartSpec {
  readonly schema: NamespaceSchema
  readonly format: RecordFormat
  readonly rows: readonly Row[]
  readonly schemaVersion?: number
}

export function makePart(spec: PartSpec): BatchPart & { readonly schema: NamespaceSchema } {
  const body = spec.format === 'csv' ? encodeCsv(spec.rows, spec.schema.fields) : encodeJsonl(spec.rows)
  return rawPart(spec.schema, spec.format, body, spec.rows.length, spec.schemaVersion)
}

/** A part with a hand-written body, for input a destination must reject. */
export function rawPart(
  schema: NamespaceSchema,
  format: RecordFormat,
  body: string | Uint8Array,
  rows: number,
  schemaVersion = 1,
): BatchPart & { readonly schema: NamespaceSchema } {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body
  return { namespace: schema.namespace, schemaVersion, format, rows, body: bytes, schema }
}

export interface BatchSpec {
  readonly pipeline: string
  readonly epoch?: string
  readonly seq: bigint | number
  readonly fence?: bigint | number
  readonly parts: readonly (PartSpec | (BatchPart & { readonly schema: NamespaceSchema }))[]
}

export function makeBatch(spec: BatchSpec): SinkBatch {
  return {
    id: { pipeline: spec.pipeline, epoch: spec.epoch ?? 'epoch-1', seq: BigInt(spec.seq) },
    fence: BigInt(spec.fence ?? 1),
    parts: spec.parts.map((p) => ('body' in p ? p : makePart(p))),
  }
}
