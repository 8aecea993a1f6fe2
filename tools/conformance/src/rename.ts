/**
 * Cases for a sink that declares `renamesColumns`: a field a user renamed (`Field.formerNames`)
 * finds its column under the latest former name the table has, and `prepare` renames it, keeping
 * the rows landed before. Preparing again, or after a restart, changes nothing more.
 */
import type { NamespaceSchema } from '@skippr/connector-api'
import { expect, it } from 'vitest'
import type { Row } from './fixtures.js'
import { makeBatch } from './fixtures.js'
import type { Session } from './session.js'
import { expected, expectLanded } from './session.js'

export function renameCases(session: Session): void {
  it('renames the column of a renamed field and keeps its rows; preparing again changes nothing', async () => {
    const namespace = session.name('rename')
    const schema = (name: string, formerNames?: string[]): NamespaceSchema => ({
      namespace,
      fields: [
        { name: 'id', type: 'long' },
        { name, type: 'string', ...(formerNames === undefined ? {} : { formerNames }) },
      ],
    })
    const land = async (version: NamespaceSchema, seq: number, rows: Row[]) => {
      const sink = await session.open()
      await sink.prepare(version)
      await sink.prepare(version)
      expectLanded(
        await sink.write(
          makeBatch({ pipeline: namespace, seq, parts: [{ schema: version, format: 'csv', rows }] }),
        ),
        rows.length,
      )
      await session.close(sink)
    }
    await land(schema('name'), 1, [{ id: 1, name: 'one' }])
    await land(schema('label', ['name']), 2, [{ id: 2, label: 'two' }])
    // Renamed twice, the sink having seen the middle name: it renames that one.
    await land(schema('title', ['name', 'label']), 3, [{ id: 3, title: 'three' }])
    const final = schema('title', ['name', 'label'])
    const rows: Row[] = [
      { id: 1, title: 'one' },
      { id: 2, title: 'two' },
      { id: 3, title: 'three' },
    ]
    expect(await session.rows(namespace, final.fields)).toEqual(expected(rows, final.fields))
    const columns = new Set((await session.tagged(namespace)).flatMap((row) => Object.keys(row)))
    expect([...columns].filter((c) => c === 'name' || c === 'label')).toEqual([])
  })

  it('adds the column when the table has none of the former names', async () => {
    const namespace = session.name('rename_absent')
    const v1: NamespaceSchema = { namespace, fields: [{ name: 'id', type: 'long' }] }
    const v2: NamespaceSchema = {
      namespace,
      fields: [
        { name: 'id', type: 'long' },
        { name: 'label', type: 'string', formerNames: ['never_landed'] },
      ],
    }
    const sink = await session.open()
    await sink.prepare(v1)
    expectLanded(
      await sink.write(
        makeBatch({ pipeline: namespace, seq: 1, parts: [{ schema: v1, format: 'csv', rows: [{ id: 1 }] }] }),
      ),
      1,
    )
    await sink.prepare(v2)
    expectLanded(
      await sink.write(
        makeBatch({
          pipeline: namespace,
          seq: 2,
          parts: [{ schema: v2, format: 'jsonl', rows: [{ id: 2, label: 'x' }] }],
        }),
      ),
      1,
    )
    expect(await session.rows(namespace, v2.fields)).toEqual(
      expected(
        [
          { id: 1, label: null },
          { id: 2, label: 'x' },
        ],
        v2.fields,
      ),
    )
  })
}
