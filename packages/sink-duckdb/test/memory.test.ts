/**
 * What the sink keeps in memory once a batch has landed: neither the batch (the runner holds it
 * until then) nor the table blocks the load wrote (DuckDB would cache them up to memory_limit).
 * Either one grew a sync's memory with what it landed.
 */
import { rm } from 'node:fs/promises'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { makeBatch, rawPart } from '@skippr/conformance'
import type { NamespaceSchema } from '@skippr/connector-api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { DuckdbSink } from '../src/index.js'
import { query, type TempWarehouse, tempWarehouse } from './helpers.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const schema: NamespaceSchema = {
  namespace: 'rentals',
  fields: [
    { name: 'id', type: 'long', nullable: false },
    { name: 'name', type: 'string', nullable: true },
  ],
  primaryKey: ['id'],
}

/** Batch `seq` of `rows` CSV rows: more than a row group (122,880 rows), so DuckDB writes blocks as it loads. */
const batch = (seq: number, rows: number) =>
  makeBatch({
    pipeline: 'p',
    seq,
    parts: [
      rawPart(
        schema,
        'csv',
        Array.from({ length: rows }, (_, i) => `${seq * rows + i},name ${i} of batch ${seq}\n`).join(''),
        rows,
      ),
    ],
  })

/** DuckDB's block size: the unit of what it caches. */
const BLOCK_BYTES = 262_144n

let warehouse: TempWarehouse
let sink: DuckdbSink

beforeEach(async () => {
  warehouse = await tempWarehouse()
  sink = warehouse.sink()
  await sink.prepare(schema)
})
afterEach(async () => {
  await sink.close()
  await rm(warehouse.dir, { recursive: true, force: true })
})

describe('DuckdbSink memory', () => {
  it('keeps no table blocks cached after a landing, and keeps its memory limit', async () => {
    expect((await sink.write(batch(1, 300_000))).status).toBe('landed')
    // Through the connection's queue, so it returns once the landing's turn, eviction included, has
    // ended; it reads nothing from the open file, which would bring a block back.
    await sink.check()
    const [memory] = await query(
      warehouse.file,
      "SELECT sum(memory_usage_bytes) FILTER (tag = 'BASE_TABLE') AS cached, current_setting('memory_limit') AS memory_limit FROM duckdb_memory()",
    )
    // Kept, the 300,000 rows' blocks are 2 MiB; at most one block (256 KiB) comes back in the meantime.
    expect(memory!.cached).toBeLessThanOrEqual(BLOCK_BYTES)
    expect(memory!.memory_limit).toBe('244.1 MiB')
  })

  it('holds no batch that landed while its connection is busy', async () => {
    const bodies: WeakRef<Uint8Array>[] = []
    const write = (seq: number) => {
      const next = batch(seq, 1000)
      bodies.push(new WeakRef(next.parts[0]!.body))
      return sink.write(next)
    }
    // Two writes queued together land in one turn; the count queued between keeps the connection busy.
    const written = Promise.all([write(1), write(2)])
    const counted = sink.count('rentals')
    expect((await written).map((outcome) => outcome.status)).toEqual(['landed', 'landed'])
    gc()
    expect(bodies.map((body) => body.deref() === undefined)).toEqual([true, true])
    await counted
  })
})
