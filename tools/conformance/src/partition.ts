/**
 * `partition_by` on an object destination, run by each store package against its real server (and
 * by the File sink on a real directory): a batch split by a row field lands as one object per value
 * under Hive-style levels from the commit time the WAL stored (never the clock of the write), the
 * objects together hold the batch's rows exactly once and byte for byte, and a retry days later
 * addresses the same keys with the same bytes.
 */
import { randomBytes } from 'node:crypto'
import type { Sink, SinkBatch } from '@skippr/connector-api'
import type { ObjectStore } from '@skippr/object-sink'
import { PARTITION_FIELD_MISSING, partitionValue } from '@skippr/object-sink'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { allTypesSchema, makeBatch, rawPart, trickyRows } from './fixtures.js'
import { objectRows } from './object-rows.js'

export interface PartitionHarness {
  /** Shown in the test names, e.g. `s3 (s3rver)`. */
  readonly name: string
  /**
   * A sink for the pipeline `orders-sync`, made from the destination's config with the shared
   * object-sink `fields` given (`format` is `jsonl` unless given) below `prefix`, and a store of
   * its own reading what it writes there. Every call is a new sink, as after a restart.
   */
  sinkAt(prefix: string, fields: Record<string, unknown>): Promise<{ sink: Sink; store: ObjectStore }>
  setup?(): Promise<void>
  cleanup?(): Promise<void>
}

export const PARTITION_TEMPLATE = 'dt={commit_time:%Y-%m-%d}/hour={commit_time:%H}/name={field:name}'
/** Long before the test runs: a key from the clock of the write could not show this date. */
const COMMITTED_AT = Date.UTC(2024, 1, 29, 23, 30)
const DAY_MS = 86_400_000
const schema = allTypesSchema('orders')
const rows = trickyRows()
const LEVEL = 'orders/dt=2024-02-29/hour=23'
const FILE = 'orders-sync/e1/000000000042'
const MANIFEST = '_manifests/orders-sync/e1/000000000042.json'

/** Two parts, one JSON lines and one CSV; JSON-lines values a double could not hold, and names that need escaping. */
export function partitionedBatch(): SinkBatch {
  const jsonl = [
    '{"id":9223372036854775807,"name":"a/b","price":0.10000000000000000555,"doc":{"k" : [1, 2]}}',
    '{"id":-9223372036854775808,"name":"..","price":1.5e300}',
    '{"id":7,"name":"a/b","qty":7}',
    '{"id":8,"name":null}',
    '{"id":9,"name":""}',
    '{"id":10}',
  ]
  const base = makeBatch({
    pipeline: 'orders-sync',
    epoch: 'e1',
    seq: 42,
    parts: [rawPart(schema, 'jsonl', `${jsonl.join('\n')}\n`, jsonl.length), { schema, format: 'csv', rows }],
  })
  return { ...base, committedAt: COMMITTED_AT }
}

const lines = (bytes: Uint8Array) => new TextDecoder().decode(bytes).split('\n').filter(Boolean)

export function partitionSuite(harness: PartitionHarness): void {
  describe(`${harness.name}: partition_by`, () => {
    const tag = randomBytes(4).toString('hex')
    const opened: { sink: Sink; store: ObjectStore }[] = []
    const sinkAt = async (label: string, fields: Record<string, unknown> = {}) => {
      const made = await harness.sinkAt(`partition_${tag}/${label}`, fields)
      opened.push(made)
      return made
    }
    beforeAll(async () => {
      await harness.setup?.()
    })
    afterEach(() => vi.useRealTimers())
    afterAll(async () => {
      for (const { sink, store } of opened.splice(0)) await Promise.all([sink.close(), store.close()])
      await harness.cleanup?.()
    })

    it('lands one object per value under levels from the WAL commit time; together they hold every row once, as committed', async () => {
      const { sink, store } = await sinkAt('split', { partition_by: PARTITION_TEMPLATE, manifest: true })
      await sink.prepare(schema)
      expect(await sink.write(partitionedBatch())).toEqual({ status: 'landed', rows: 6 + rows.length })
      const objects = [
        `${LEVEL}/name=%2E./${FILE}-0-1.jsonl`,
        `${LEVEL}/name=__HIVE_DEFAULT_PARTITION__/${FILE}-0-2.jsonl`,
        `${LEVEL}/name=a%2Fb/${FILE}-0-0.jsonl`,
        // Part 1's groups, in the order of their first row: NULL and '' share the default partition.
        ...[...new Set(rows.map((row) => partitionValue((row.name as string | null) ?? null)))].map(
          (name, group) => `${LEVEL}/name=${name}/${FILE}-1-${group}.jsonl`,
        ),
      ]
      expect(await store.list('')).toEqual([MANIFEST, ...objects].sort())
      // Part 0 is JSON lines already: each object holds its rows' lines as committed, in order.
      const part0 = lines(partitionedBatch().parts[0]!.body)
      expect(lines(await store.read(`${LEVEL}/name=a%2Fb/${FILE}-0-0.jsonl`))).toEqual([part0[0], part0[2]])
      expect(lines(await store.read(`${LEVEL}/name=__HIVE_DEFAULT_PARTITION__/${FILE}-0-2.jsonl`))).toEqual(
        part0.slice(3),
      )
      const split = await Promise.all(objects.filter((k) => k.includes('-0-')).map((k) => store.read(k)))
      expect(split.flatMap(lines).sort()).toEqual([...part0].sort())
      // Every row once, each value as the unsplit batch lands it.
      const whole = await sinkAt('whole')
      await whole.sink.prepare(schema)
      expect((await whole.sink.write(partitionedBatch())).status).toBe('landed')
      const byId = (a: Record<string, unknown>, b: Record<string, unknown>) =>
        String(a.id).localeCompare(String(b.id))
      expect((await objectRows(store, 'orders')).sort(byId)).toEqual(
        (await objectRows(whole.store, 'orders')).sort(byId),
      )
      const manifest = JSON.parse(new TextDecoder().decode(await store.read(MANIFEST)))
      expect(manifest.objects.map((o: { key: string }) => o.key).sort()).toEqual([...objects].sort())
      expect(manifest.objects.reduce((sum: number, o: { rows: number }) => sum + o.rows, 0)).toBe(
        6 + rows.length,
      )
    })

    it('a retry days later, with a later clock, finds or writes the same bytes at the same keys and no other object', async () => {
      const fields = { partition_by: PARTITION_TEMPLATE, format: 'parquet', manifest: true }
      const first = await sinkAt('retry', fields)
      await first.sink.prepare(schema)
      expect((await first.sink.write(partitionedBatch())).status).toBe('landed')
      const keys = await first.store.list('')
      const sums = await Promise.all(keys.map(async (key) => (await first.store.stat(key))?.sha256))
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3 * DAY_MS })
      const again = await sinkAt('retry', fields)
      await again.sink.prepare(schema)
      const repeat = again.store.createsOnce ? 'already-landed' : 'landed'
      expect((await again.sink.write(partitionedBatch())).status).toBe(repeat)
      expect(await again.store.list('')).toEqual(keys)
      expect(await Promise.all(keys.map(async (key) => (await again.store.stat(key))?.sha256))).toEqual(sums)
      expect(keys.every((key) => key === MANIFEST || key.startsWith(`${LEVEL}/name=`))).toBe(true)
    })

    it('a Parquet value a column cannot hold refuses its row by its record in the whole part, and nothing lands', async () => {
      const { sink, store } = await sinkAt('refused', { partition_by: PARTITION_TEMPLATE, format: 'parquet' })
      const body = '{"id":1,"name":"x"}\n{"id":2,"name":"y"}\n{"id":3,"name":"x","qty":"abc"}\n'
      const refusing = {
        ...makeBatch({ pipeline: 'orders-sync', seq: 5, parts: [rawPart(schema, 'jsonl', body, 3)] }),
        committedAt: COMMITTED_AT,
      }
      await sink.prepare(schema)
      expect(await sink.write(refusing)).toMatchObject({ status: 'refused', rows: [{ part: 0, row: 2 }] })
      expect(await store.list('')).toEqual([])
    })

    it('a field the namespace does not have: one line naming it, for good, and no object', async () => {
      const { sink, store } = await sinkAt('missing', { partition_by: 'region={field:region}' })
      await expect(sink.prepare(schema)).rejects.toThrow(
        'partition_by "region={field:region}" takes {field:region}, which namespace orders does not have',
      )
      const outcome = await sink.write(partitionedBatch())
      expect(outcome).toMatchObject({ status: 'fatal', error: { code: PARTITION_FIELD_MISSING } })
      expect(await store.list('')).toEqual([])
    })
  })
}
