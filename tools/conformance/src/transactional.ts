/**
 * Cases only an exactly-once sink can pass: the identity check, the fence and the rows share one
 * transaction, so a refused or rejected batch leaves nothing behind.
 */
import { type NamespaceSchema, withoutRecords } from '@skippr/connector-api'
import { expect, it } from 'vitest'
import { allTypesSchema, makeBatch, makePart, rawPart, trickyRows } from './fixtures.js'
import type { Session } from './session.js'
import { describeOutcome, expected, expectLanded } from './session.js'

export function transactionalCases(session: Session): void {
  it('fencing: a lower fence token is refused with fatal after a higher one landed, also after a restart', async () => {
    const schema = allTypesSchema(session.name('fence'))
    const pipeline = session.name('fence')
    const rows = trickyRows()
    const write = (seq: number, fence: number, idBase: number) =>
      makeBatch({ pipeline, seq, fence, parts: [{ schema, format: 'csv', rows: trickyRows(idBase) }] })

    const sink = await session.open()
    await sink.prepare(schema)
    expectLanded(await sink.write(write(1, 5, 0)), rows.length)
    const stale = await sink.write(write(2, 4, 100))
    expect(describeOutcome(stale)).toMatchObject({ status: 'fatal', error: expect.stringMatching(/\S/) })
    await session.close(sink)

    const restarted = await session.open()
    await restarted.prepare(schema)
    expect((await restarted.write(write(2, 4, 100))).status).toBe('fatal')
    expectLanded(await restarted.write(write(3, 6, 200)), rows.length)
    expect(await session.rows(schema.namespace, schema.fields)).toEqual(
      expected([...trickyRows(0), ...trickyRows(200)], schema.fields),
    )
  })

  it('rows the destination refuses: refused, naming every one, nothing written; the rest lands under the same identity', async () => {
    const good = allTypesSchema(session.name('reject_ok'))
    const bad: NamespaceSchema = {
      namespace: session.name('reject_bad'),
      fields: [
        { name: 'id', type: 'long' },
        { name: 'qty', type: 'int' },
      ],
    }
    const pipeline = session.name('reject')
    const sink = await session.open()
    await sink.prepare(good)
    await sink.prepare(bad)
    const rows = trickyRows()
    // Row 1 and 3 of the CSV part and row 1 of the JSON-lines part cannot be held by an int column.
    const csv = rawPart(bad, 'csv', '1,1\n2,not-a-number\n3,3\n4,99999999999\n5,5\n', 5)
    const jsonl = rawPart(bad, 'jsonl', '{"id":6,"qty":6}\n\n{"id":7,"qty":"x"}\n{"id":8,"qty":8}\n', 3)
    const parts = [makePart({ schema: good, format: 'jsonl', rows }), csv, jsonl]
    const outcome = await sink.write(makeBatch({ pipeline, seq: 1, parts }))
    expect(
      outcome.status === 'refused'
        ? outcome.rows.map(({ part, row }) => [part, row])
        : describeOutcome(outcome),
    ).toEqual([
      [1, 1],
      [1, 3],
      [2, 1],
    ])
    for (const row of outcome.status === 'refused' ? outcome.rows : []) {
      expect(row.error, 'the reason names the column').toContain('qty')
      expect(row.code).toMatch(/\S/)
    }
    expect(await session.rows(good.namespace, good.fields)).toEqual([])
    expect(await session.rows(bad.namespace, bad.fields)).toEqual([])

    // The identity was not recorded: the batch without the refused rows lands under it.
    const without = (part: (typeof parts)[number], refusedRows: number[]) => {
      const { body } = withoutRecords(part.body, part.format, new Set(refusedRows))
      return { ...part, body, rows: part.rows - refusedRows.length }
    }
    const rest = makeBatch({
      pipeline,
      seq: 1,
      parts: [parts[0]!, without(csv, [1, 3]), without(jsonl, [1])],
    })
    expectLanded(await sink.write(rest), rows.length + 5)
    expect(await session.rows(good.namespace, good.fields)).toEqual(expected(rows, good.fields))
    expect(await session.rows(bad.namespace, bad.fields)).toEqual(
      expected(
        [1, 3, 5, 6, 8].map((id) => ({ id, qty: id })),
        bad.fields,
      ),
    )
  })
}
