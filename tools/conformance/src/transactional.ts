/**
 * Cases only an exactly-once sink can pass: the identity check, the fence and the rows share one
 * transaction, so a refused or rejected batch leaves nothing behind.
 */
import type { NamespaceSchema } from '@skippr/connector-api'
import { expect, it } from 'vitest'
import { allTypesSchema, makeBatch, rawPart, trickyRows } from './fixtures.js'
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

  it('a batch the destination rejects: fatal or retry, an error naming the table, nothing half-written', async () => {
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
    const rejected = makeBatch({
      pipeline,
      seq: 1,
      parts: [{ schema: good, format: 'jsonl', rows }, rawPart(bad, 'csv', '1,2\n2,not-a-number\n', 2)],
    })
    const outcome = describeOutcome(await sink.write(rejected))
    expect(outcome).toMatchObject({ status: expect.stringMatching(/^(fatal|retry)$/) })
    expect((outcome as { error: string }).error).toContain(bad.namespace)
    expect(await session.rows(good.namespace, good.fields)).toEqual([])
    expect(await session.rows(bad.namespace, bad.fields)).toEqual([])

    // The identity was not recorded: the corrected batch under the same identity lands.
    const corrected = makeBatch({
      pipeline,
      seq: 1,
      parts: [
        { schema: good, format: 'jsonl', rows },
        { schema: bad, format: 'csv', rows: [{ id: 1, qty: 2 }] },
      ],
    })
    expectLanded(await sink.write(corrected), rows.length + 1)
    expect(await session.rows(good.namespace, good.fields)).toEqual(expected(rows, good.fields))
  })
}
