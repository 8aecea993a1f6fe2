/**
 * Cases every sink that stores rows must pass, whatever its tier: formats, awkward values,
 * identifiers, schema evolution and multi-part batches.
 */
import type { Field, NamespaceSchema } from '@skippr/connector-api'
import { ROW_COUNT_MISMATCH } from '@skippr/connector-api'
import { expect, it } from 'vitest'
import type { Row } from './fixtures.js'
import { ALL_TYPES_FIELDS, allTypesSchema, BIG_ID, makeBatch, makePart, trickyRows } from './fixtures.js'
import type { Session } from './session.js'
import { expected, expectLanded } from './session.js'

export function landingCases(session: Session): void {
  for (const format of ['csv', 'jsonl'] as const) {
    it(`lands ${format} rows with NULLs, empty strings, quotes, commas, newlines, unicode and timestamps`, async () => {
      const schema = allTypesSchema(session.name(`values_${format}`))
      const sink = await session.open()
      await sink.prepare(schema)
      const rows = trickyRows()
      const outcome = await sink.write(
        makeBatch({ pipeline: schema.namespace, seq: 1, parts: [{ schema, format, rows }] }),
      )
      expectLanded(outcome, rows.length)
      expect(await session.rows(schema.namespace, ALL_TYPES_FIELDS)).toEqual(expected(rows, ALL_TYPES_FIELDS))
    })
  }

  it('a part holding another number of records than it declares: fatal, nothing of the batch lands', async () => {
    const good = allTypesSchema(session.name('count_ok'))
    const miscounted = allTypesSchema(session.name('count_bad'))
    const pipeline = session.name('count')
    const rows = trickyRows()
    const held = rows.slice(0, 2)
    const sink = await session.open()
    await sink.prepare(good)
    await sink.prepare(miscounted)
    // Declaring more records than the body holds, and fewer.
    for (const [format, declared] of [
      ['csv', 3],
      ['jsonl', 1],
    ] as const) {
      const part = { ...makePart({ schema: miscounted, format, rows: held }), rows: declared }
      const batch = makeBatch({ pipeline, seq: 1, parts: [{ schema: good, format: 'csv', rows }, part] })
      const outcome = await sink.write(batch)
      const error = 'error' in outcome ? (outcome.error as Error & { code?: unknown }) : undefined
      expect(error ? { status: outcome.status, code: error.code, message: error.message } : outcome).toEqual({
        status: 'fatal',
        code: ROW_COUNT_MISMATCH,
        message: expect.stringContaining(miscounted.namespace),
      })
      expect(await session.rows(good.namespace, good.fields)).toEqual([])
      expect(await session.rows(miscounted.namespace, miscounted.fields)).toEqual([])
    }
    // Nothing of the refused batch is in the destination: the corrected batch under its identity lands whole.
    const corrected = makeBatch({
      pipeline,
      seq: 1,
      parts: [
        { schema: good, format: 'csv', rows },
        { schema: miscounted, format: 'jsonl', rows: held },
      ],
    })
    expectLanded(await sink.write(corrected), rows.length + held.length)
    expect(await session.rows(good.namespace, good.fields)).toEqual(expected(rows, good.fields))
    expect(await session.rows(miscounted.namespace, miscounted.fields)).toEqual(
      expected(held, miscounted.fields),
    )
  })

  it('quotes identifiers from source data: spaces, quotes, upper case, SQL keywords, unicode', async () => {
    const fields: Field[] = [
      { name: 'Id', type: 'long' },
      { name: 'two words', type: 'string' },
      { name: 'say "hi"', type: 'string' },
      { name: 'select', type: 'int' },
      { name: 'ORDER', type: 'boolean' },
      { name: 'Größe', type: 'double' },
      { name: "it's", type: 'string' },
    ]
    const schema: NamespaceSchema = {
      namespace: `Order "Lines" ${session.name('select')}`,
      fields,
      primaryKey: ['Id'],
    }
    const rows: Row[] = [
      { Id: 1, 'two words': 'a b', 'say "hi"': '"hi"', select: 7, ORDER: true, Größe: 1.25, "it's": "it's" },
      { Id: 2, 'two words': null, 'say "hi"': '', select: null, ORDER: false, Größe: null, "it's": null },
    ]
    const sink = await session.open()
    await sink.prepare(schema)
    const batch = makeBatch({
      pipeline: session.name('identifiers'),
      seq: 1,
      parts: [
        { schema, format: 'csv', rows: rows.slice(0, 1) },
        { schema, format: 'jsonl', rows: rows.slice(1) },
      ],
    })
    expectLanded(await sink.write(batch), 2)
    expect(await session.rows(schema.namespace, fields)).toEqual(expected(rows, fields))
  })

  it('evolves the schema: adds new columns, widens types, keeps the rows already landed', async () => {
    const namespace = session.name('evolve')
    const pipeline = namespace
    const v1: NamespaceSchema = {
      namespace,
      primaryKey: ['id'],
      fields: [
        { name: 'id', type: 'long' },
        { name: 'qty', type: 'int' },
        { name: 'score', type: 'int' },
        { name: 'day', type: 'date' },
        { name: 'flag', type: 'boolean' },
        { name: 'name', type: 'string' },
      ],
    }
    const v2: NamespaceSchema = {
      namespace,
      primaryKey: ['id'],
      fields: [
        { name: 'id', type: 'long' },
        { name: 'qty', type: 'long' },
        { name: 'score', type: 'double' },
        { name: 'day', type: 'timestamp' },
        { name: 'flag', type: 'string' },
        { name: 'name', type: 'string' },
        { name: 'extra', type: 'string' },
        { name: 'big', type: 'long' },
      ],
    }
    const sink = await session.open()
    await sink.prepare(v1)
    const old: Row = { id: 1, qty: 5, score: 7, day: '2024-01-02', flag: true, name: 'a' }
    expectLanded(
      await sink.write(makeBatch({ pipeline, seq: 1, parts: [{ schema: v1, format: 'csv', rows: [old] }] })),
      1,
    )

    await sink.prepare(v2)
    await sink.prepare(v2)
    const wide: Row[] = [
      {
        id: 2,
        qty: 5_000_000_000,
        score: 2.5,
        day: '2024-01-03T04:05:06.007Z',
        flag: 'maybe',
        name: 'b',
        extra: 'x',
        big: BIG_ID,
      },
      { id: 3, qty: -1, score: 0.5, day: null, flag: null, name: null, extra: '', big: null },
    ]
    const batch = makeBatch({
      pipeline,
      seq: 2,
      parts: [
        { schema: v2, format: 'jsonl', rows: wide.slice(0, 1), schemaVersion: 2 },
        { schema: v2, format: 'csv', rows: wide.slice(1), schemaVersion: 2 },
      ],
    })
    expectLanded(await sink.write(batch), 2)
    // A date widened to a timestamp is midnight UTC; a boolean widened to a string is its text.
    const oldWidened: Row = { ...old, day: '2024-01-02T00:00:00.000Z', flag: 'true' }
    expect(await session.rows(namespace, v2.fields)).toEqual(expected([oldWidened, ...wide], v2.fields))
  })

  it('never narrows: preparing an older schema after a newer one keeps the wide columns and their data', async () => {
    const namespace = session.name('narrow')
    const narrow: NamespaceSchema = {
      namespace,
      fields: [
        { name: 'id', type: 'long' },
        { name: 'qty', type: 'int' },
      ],
    }
    const wide: NamespaceSchema = {
      namespace,
      fields: [
        { name: 'id', type: 'long' },
        { name: 'qty', type: 'long' },
      ],
    }
    const sink = await session.open()
    await sink.prepare(wide)
    const big: Row = { id: 1, qty: 5_000_000_000 }
    expectLanded(
      await sink.write(
        makeBatch({ pipeline: namespace, seq: 1, parts: [{ schema: wide, format: 'csv', rows: [big] }] }),
      ),
      1,
    )
    await session.close(sink)

    const again = await session.open()
    await again.prepare(narrow)
    const small: Row = { id: 2, qty: 3 }
    expectLanded(
      await again.write(
        makeBatch({
          pipeline: namespace,
          seq: 2,
          parts: [{ schema: narrow, format: 'jsonl', rows: [small] }],
        }),
      ),
      1,
    )
    expect(await session.rows(namespace, wide.fields)).toEqual(expected([big, small], wide.fields))
  })

  it('lands a batch of several parts across namespaces and formats in one write', async () => {
    const a = allTypesSchema(session.name('multi_a'))
    const b = allTypesSchema(session.name('multi_b'))
    const sink = await session.open()
    await sink.prepare(a)
    await sink.prepare(b)
    const batch = makeBatch({
      pipeline: session.name('multi'),
      seq: 1,
      parts: [
        { schema: a, format: 'csv', rows: trickyRows(0) },
        { schema: b, format: 'jsonl', rows: trickyRows(100) },
        { schema: a, format: 'jsonl', rows: trickyRows(200) },
      ],
    })
    expectLanded(await sink.write(batch), 15)
    expect(await session.rows(a.namespace, a.fields)).toEqual(
      expected([...trickyRows(0), ...trickyRows(200)], a.fields),
    )
    expect(await session.rows(b.namespace, b.fields)).toEqual(expected(trickyRows(100), b.fields))
  })
}
