/**
 * Cases about retries: the same identity written again must not duplicate rows, and a reset (a
 * new epoch) must not be mistaken for a retry.
 */
import type { SinkBatch, WriteOutcome } from '@skippr/connector-api'
import { expect, it } from 'vitest'
import { allTypesSchema, makeBatch, trickyRows } from './fixtures.js'
import type { Session } from './session.js'
import { describeOutcome, expected, expectLanded } from './session.js'

export interface RetryExpectation {
  /** What a write of an identity that already landed must return. */
  readonly repeatStatus: readonly WriteOutcome['status'][]
}

export function retryCases(session: Session, expectation: RetryExpectation): void {
  const expectRepeat = (outcome: WriteOutcome) =>
    expect(expectation.repeatStatus, JSON.stringify(describeOutcome(outcome))).toContain(outcome.status)

  const batchOf = (label: string, extra: Partial<Pick<SinkBatch['id'], 'epoch'>> = {}) => {
    const schema = allTypesSchema(session.name(label))
    const rows = trickyRows()
    const batch = makeBatch({
      pipeline: session.name(label),
      ...extra,
      seq: 7,
      parts: [
        { schema, format: 'csv', rows: rows.slice(0, 3) },
        { schema, format: 'jsonl', rows: rows.slice(3) },
      ],
    })
    return { schema, rows, batch }
  }

  it('same batch twice: the rows land once', async () => {
    const { schema, rows, batch } = batchOf('twice')
    const sink = await session.open()
    await sink.prepare(schema)
    expectLanded(await sink.write(batch), rows.length)
    expectRepeat(await sink.write(batch))
    expect(await session.rows(schema.namespace, schema.fields)).toEqual(expected(rows, schema.fields))
  })

  it('crash between write and ack: a fresh sink writing the same identity again leaves the rows once', async () => {
    const { schema, rows, batch } = batchOf('crash')
    const first = await session.open()
    await first.prepare(schema)
    expectLanded(await first.write(batch), rows.length)
    await session.close(first)

    const restarted = await session.open()
    await restarted.prepare(schema)
    expectRepeat(await restarted.write(batch))
    expect(await session.rows(schema.namespace, schema.fields)).toEqual(expected(rows, schema.fields))
  })

  it("reset: a new epoch's identical seq lands as new rows", async () => {
    const { schema, rows, batch } = batchOf('reset', { epoch: 'epoch-a' })
    const sink = await session.open()
    await sink.prepare(schema)
    expectLanded(await sink.write(batch), rows.length)
    const afterReset: SinkBatch = { ...batch, id: { ...batch.id, epoch: 'epoch-b' } }
    expectLanded(await sink.write(afterReset), rows.length)
    expect(await session.rows(schema.namespace, schema.fields)).toEqual(
      expected([...rows, ...rows], schema.fields),
    )
  })
}
