/**
 * A small in-memory exactly-once sink that checks values against their types, used to show the
 * suites pass for a correct sink, and (with one defect switched on) fail for a broken one.
 */
import type { FieldType, NamespaceSchema, Sink, SinkBatch, WriteOutcome } from '@skippr/connector-api'
import { alreadyLanded, batchKey, cannotLand, evolveSchema, landed } from '@skippr/connector-api'
import { decodeRows, type SinkHarness } from '../src/index.js'

export type Defect = 'none' | 'forgets-identities' | 'not-atomic' | 'ignores-fence'

interface Store {
  schemas: Map<string, NamespaceSchema>
  rows: Map<string, Record<string, unknown>[]>
  landed: Set<string>
  fences: Map<string, bigint>
}

const CHECKS: Partial<Record<FieldType, RegExp>> = {
  int: /^-?\d+$/,
  long: /^-?\d+$/,
  double: /^-?[\d.]+(e-?\d+)?$/i,
  boolean: /^(true|false)$/,
}

class ReferenceSink implements Sink {
  readonly guarantee = 'exactly-once' as const
  constructor(
    private readonly store: Store,
    private readonly defect: Defect,
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
    if (this.store.landed.has(key) && this.defect !== 'forgets-identities') return alreadyLanded()
    const staged: [string, Record<string, unknown>[]][] = []
    for (const part of batch.parts) {
      const rows = decodeRows(part.body, part.format, part.schema.fields)
      const bad = rows.flatMap((row) =>
        part.schema.fields.filter(
          (f) => row[f.name] != null && !CHECKS[f.type]?.test(String(row[f.name])) && CHECKS[f.type],
        ),
      )
      if (bad.length > 0) return cannotLand(new Error(`${part.namespace}: bad value in ${bad[0]?.name}`))
      if (this.defect === 'not-atomic') this.store.rows.get(part.namespace)?.push(...rows)
      else staged.push([part.namespace, rows])
    }
    for (const [namespace, rows] of staged) this.store.rows.get(namespace)?.push(...rows)
    this.store.landed.add(key)
    this.store.fences.set(batch.id.pipeline, batch.fence > fence ? batch.fence : fence)
    return landed(batch.parts.reduce((sum, p) => sum + p.rows, 0))
  }

  async close(): Promise<void> {}
}

export function referenceHarness(defect: Defect): SinkHarness {
  const store: Store = { schemas: new Map(), rows: new Map(), landed: new Set(), fences: new Map() }
  return {
    name: `reference (${defect})`,
    createSink: async () => new ReferenceSink(store, defect),
    readRows: async (namespace) => store.rows.get(namespace) ?? [],
  }
}
