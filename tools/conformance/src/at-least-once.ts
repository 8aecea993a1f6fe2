/**
 * Cases for the `at-least-once` tier: a retry may land a batch again, but only whole parts, and
 * every row carries its part's key (`BATCH_COLUMN`, the same on each retry), so that keeping one
 * copy per key leaves every row exactly once. The harness's `readRows` returns that key under
 * `BATCH_COLUMN` (a column, or a message header the harness copies into the row).
 */
import type { Field, SinkBatch } from '@skippr/connector-api'
import { BATCH_COLUMN, partKey } from '@skippr/connector-api'
import { expect, it } from 'vitest'
import { type Canonical, canonicalRows } from './canonical.js'
import { allTypesSchema, makeBatch, type Row, trickyRows } from './fixtures.js'
import type { Session } from './session.js'
import { describeOutcome, expected, expectLanded } from './session.js'

/** Rows as the harness reads them, each with its `BATCH_COLUMN`. */
type Held = readonly Record<string, unknown>[]

export function atLeastOnceCases(session: Session): void {
  const batchOf = (label: string, epoch = 'epoch-1') => {
    const schema = allTypesSchema(session.name(label))
    const rows = trickyRows()
    const parts = [rows.slice(0, 3), rows.slice(3)]
    const batch = makeBatch({
      pipeline: session.name(label),
      epoch,
      seq: 7,
      parts: [
        { schema, format: 'csv', rows: parts[0] ?? [] },
        { schema, format: 'jsonl', rows: parts[1] ?? [] },
      ],
    })
    return { schema, rows, parts, batch }
  }

  const expectRepeat = (outcome: Awaited<ReturnType<Awaited<ReturnType<Session['open']>>['write']>>) =>
    expect(['landed', 'already-landed'], JSON.stringify(describeOutcome(outcome))).toContain(outcome.status)

  it('same batch twice: each part lands at least once, only whole copies, each row tagged with its part key', async () => {
    const { schema, rows, parts, batch } = batchOf('twice')
    const sink = await session.open()
    await sink.prepare(schema)
    expectLanded(await sink.write(batch), rows.length)
    expectRepeat(await sink.write(batch))
    const held = await session.tagged(schema.namespace)
    expect(oneCopyPerKey(held, batch, parts, schema.fields)).toEqual(expected(rows, schema.fields))
  })

  it('crash between write and ack: a fresh sink writing the same identity adds only whole tagged copies', async () => {
    const { schema, rows, parts, batch } = batchOf('crash')
    const first = await session.open()
    await first.prepare(schema)
    expectLanded(await first.write(batch), rows.length)
    await session.close(first)

    const restarted = await session.open()
    await restarted.prepare(schema)
    expectRepeat(await restarted.write(batch))
    const held = await session.tagged(schema.namespace)
    expect(oneCopyPerKey(held, batch, parts, schema.fields)).toEqual(expected(rows, schema.fields))
  })

  it("reset: a new epoch's identical seq lands as new rows under keys of its own", async () => {
    const before = batchOf('reset', 'epoch-a')
    const sink = await session.open()
    await sink.prepare(before.schema)
    expectLanded(await sink.write(before.batch), before.rows.length)
    const after: SinkBatch = { ...before.batch, id: { ...before.batch.id, epoch: 'epoch-b' } }
    expectLanded(await sink.write(after), before.rows.length)
    const held = await session.tagged(before.schema.namespace)
    const fields = before.schema.fields
    expect({
      before: oneCopyPerKey(onlyKeysOf(held, before.batch), before.batch, before.parts, fields),
      after: oneCopyPerKey(onlyKeysOf(held, after), after, before.parts, fields),
    }).toEqual({ before: expected(before.rows, fields), after: expected(before.rows, fields) })
  })
}

function onlyKeysOf(held: Held, batch: SinkBatch): Held {
  const keys = new Set(batch.parts.map((_, index) => partKey(batch.id, index)))
  return held.filter((row) => keys.has(String(row[BATCH_COLUMN])))
}

/**
 * The rows left after keeping one copy per part key, checked on the way: every row's key is one of
 * the batch's parts, and under each key the rows are that part's, an exact whole number of times.
 */
function oneCopyPerKey(
  held: Held,
  batch: SinkBatch,
  parts: readonly (readonly Row[])[],
  fields: readonly Field[],
): Record<string, Canonical>[] {
  const byKey = new Map<string, Record<string, unknown>[]>()
  for (const { [BATCH_COLUMN]: key, ...row } of held) {
    const group = byKey.get(String(key)) ?? []
    group.push(row)
    byKey.set(String(key), group)
  }
  const keys = parts.map((_, index) => partKey(batch.id, index))
  expect([...byKey.keys()].sort(), `the ${BATCH_COLUMN} values`).toEqual([...keys].sort())
  parts.forEach((rows, index) => {
    const group = byKey.get(keys[index] ?? '') ?? []
    const copies = Math.max(1, Math.round(group.length / rows.length))
    const repeated = Array.from({ length: copies }, () => rows).flat()
    expect(canonicalRows(group, fields), `the rows tagged ${keys[index]}`).toEqual(expected(repeated, fields))
  })
  return expected(parts.flat(), fields)
}
