/**
 * A small in-memory sink that checks values against their types, used to show the suites pass for
 * a correct sink, and (with one defect switched on) fail for a broken one. Exactly-once by default;
 * as an at-least-once sink it lands every write again, each row tagged with its part key.
 */
import type {
  FieldType,
  NamespaceSchema,
  RefusedRow,
  Sink,
  SinkBatch,
  WriteOutcome,
} from '@skippr/connector-api'
import {
  alreadyLanded,
  BATCH_COLUMN,
  batchKey,
  cannotLand,
  evolveSchema,
  landed,
  partKey,
  RowCountMismatchError,
  refused,
} from '@skippr/connector-api'
import { decodeRows, type SinkHarness } from '../src/index.js'

export type Defect =
  | 'none'
  | 'forgets-identities'
  | 'not-atomic'
  | 'ignores-fence'
  | 'ignores-row-count'
  | 'names-first-refusal-only'
  /** At least once: rows carry no part key. */
  | 'untagged'
  /** At least once: the key changes from one write of a batch to the next. */
  | 'key-per-write'
  /** At least once: a repeated write lands a part without its last row. */
  | 'repeat-drops-a-row'

export type ReferenceTier = 'exactly-once' | 'at-least-once'

interface Store {
  schemas: Map<string, NamespaceSchema>
  rows: Map<string, Record<string, unknown>[]>
  landed: Set<string>
  fences: Map<string, bigint>
  writes: number
}

const CHECKS: Partial<Record<FieldType, RegExp>> = {
  int: /^-?\d+$/,
  long: /^-?\d+$/,
  double: /^-?[\d.]+(e-?\d+)?$/i,
  boolean: /^(true|false)$/,
}

/** The integers a type holds: `99999999999` is no int. */
const RANGES: Partial<Record<FieldType, bigint>> = { int: 2n ** 31n, long: 2n ** 63n }

/** Why `value` does not fit `type`, or undefined when it does. */
function misfit(value: unknown, type: FieldType): string | undefined {
  if (value == null) return undefined
  const text = String(value)
  if (CHECKS[type] && !CHECKS[type].test(text)) return `not a ${type}: ${JSON.stringify(text)}`
  const limit = RANGES[type]
  if (limit !== undefined && (BigInt(text) >= limit || BigInt(text) < -limit))
    return `out of ${type} range: ${text}`
  return undefined
}

class ReferenceSink implements Sink {
  constructor(
    private readonly store: Store,
    private readonly defect: Defect,
    readonly guarantee: ReferenceTier,
  ) {}

  async prepare(schema: NamespaceSchema): Promise<void> {
    const saved = this.store.schemas.get(schema.namespace)
    this.store.schemas.set(schema.namespace, saved ? evolveSchema(saved, schema) : schema)
    if (!this.store.rows.has(schema.namespace)) this.store.rows.set(schema.namespace, [])
  }

  async write(batch: SinkBatch): Promise<WriteOutcome> {
    const fence = this.store.fences.get(batch.id.pipeline) ?? 0n
    if (batch.fence < fence && this.defect !== 'ignores-fence') return cannotLand(new Error('fenced'))
    const key = batchKey(batch.id)
    const repeat = this.store.landed.has(key)
    const remembers = this.guarantee === 'exactly-once' && this.defect !== 'forgets-identities'
    if (repeat && remembers) return alreadyLanded()
    this.store.writes += 1
    const staged: [string, Record<string, unknown>[]][] = []
    const refusedRows: RefusedRow[] = []
    for (const [index, part] of batch.parts.entries()) {
      const rows = decodeRows(part.body, part.format, part.schema.fields)
      for (const [row, values] of rows.entries()) {
        for (const field of part.schema.fields) {
          const why = misfit(values[field.name], field.type)
          if (why === undefined) continue
          refusedRows.push({
            part: index,
            row,
            error: `${part.namespace}.${field.name}: ${why}`,
            code: 'REFERENCE',
          })
          break
        }
      }
      if (rows.length !== part.rows && this.defect !== 'ignores-row-count')
        return cannotLand(
          new RowCountMismatchError({
            target: `namespace ${part.namespace}`,
            batch: key,
            expected: part.rows,
            loaded: rows.length,
          }),
        )
      const kept = repeat && this.defect === 'repeat-drops-a-row' ? rows.slice(0, -1) : rows
      const tagged = this.guarantee === 'at-least-once' ? kept.map((r) => this.tag(r, batch, index)) : kept
      if (this.defect === 'not-atomic') this.store.rows.get(part.namespace)?.push(...tagged)
      else staged.push([part.namespace, tagged])
    }
    if (refusedRows.length > 0)
      return refused(this.defect === 'names-first-refusal-only' ? refusedRows.slice(0, 1) : refusedRows)
    for (const [namespace, rows] of staged) this.store.rows.get(namespace)?.push(...rows)
    this.store.landed.add(key)
    this.store.fences.set(batch.id.pipeline, batch.fence > fence ? batch.fence : fence)
    return landed(batch.parts.reduce((sum, p) => sum + p.rows, 0))
  }

  private tag(row: Record<string, unknown>, batch: SinkBatch, part: number): Record<string, unknown> {
    if (this.defect === 'untagged') return row
    const key = partKey(batch.id, part)
    return { ...row, [BATCH_COLUMN]: this.defect === 'key-per-write' ? `${key}#${this.store.writes}` : key }
  }

  async close(): Promise<void> {}
}

export function referenceHarness(defect: Defect, tier: ReferenceTier = 'exactly-once'): SinkHarness {
  const store: Store = {
    schemas: new Map(),
    rows: new Map(),
    landed: new Set(),
    fences: new Map(),
    writes: 0,
  }
  return {
    name: `reference ${tier} (${defect})`,
    createSink: async () => new ReferenceSink(store, defect, tier),
    readRows: async (namespace) => store.rows.get(namespace) ?? [],
  }
}
