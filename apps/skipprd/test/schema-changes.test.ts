/**
 * Schema changes as pure functions: what each change saves, what it refuses, how the source's rows
 * are rewritten into the changed layout, how a source's own evolution meets a user's change, and
 * how the SQL statements and schema files are read.
 */
import { describe, expect, it } from 'vitest'
import { parseAdminStatement } from '../src/query/statements.js'
import { type AppliedSchema, evolveSaved } from '../src/schema/applied.js'
import { describeDestinations } from '../src/schema/apply.js'
import { changedSchema } from '../src/schema/changes.js'
import { parseSchemaFile } from '../src/schema/file.js'
import { relayout } from '../src/schema/relayout.js'

const saved: AppliedSchema = {
  namespace: 'orders',
  primaryKey: ['id'],
  fields: [
    { name: 'id', type: 'long', nullable: false },
    { name: 'qty', type: 'int' },
    { name: 'note', type: 'string' },
    { name: 'old_note', type: 'string' },
  ],
}
const text = (body: Uint8Array) => new TextDecoder().decode(body)
const bytes = (lines: string) => new TextEncoder().encode(lines)

describe('changedSchema', () => {
  it('drops, widens, renames and merges, keeping the source layout and where each field reads from', () => {
    let next = changedSchema(saved, { kind: 'drop', column: 'qty' })
    next = changedSchema(next, { kind: 'merge', column: 'old_note', into: 'note' })
    next = changedSchema(next, { kind: 'rename', column: 'note', to: 'remark' })
    expect(next).toEqual({
      namespace: 'orders',
      primaryKey: ['id'],
      fields: [
        { name: 'id', type: 'long', nullable: false },
        { name: 'remark', type: 'string', nullable: true, formerNames: ['note'] },
      ],
      sourceFields: saved.fields,
      from: { remark: ['note', 'old_note'] },
    })
    const widened = changedSchema(next, { kind: 'type', column: 'id', type: 'string' })
    expect(widened.fields[0]).toEqual({ name: 'id', type: 'string', nullable: false })
  })

  it('keeps every former name of a field renamed again, and the names through a replace', () => {
    let next = changedSchema(saved, { kind: 'rename', column: 'note', to: 'remark' })
    next = changedSchema(next, { kind: 'rename', column: 'remark', to: 'comment' })
    expect(next.fields[2]).toEqual({ name: 'comment', type: 'string', formerNames: ['note', 'remark'] })
    // Back to an old name: that name is the field's own again, not a former one.
    expect(changedSchema(next, { kind: 'rename', column: 'comment', to: 'note' }).fields[2]).toEqual({
      name: 'note',
      type: 'string',
      formerNames: ['remark', 'comment'],
    })
    const replaced = changedSchema(next, {
      kind: 'replace',
      fields: [...next.fields.map(({ formerNames: _, ...f }) => f), { name: 'extra', type: 'int' }],
    })
    expect(replaced.fields[2]?.formerNames).toEqual(['note', 'remark'])
  })

  it('returns the saved schema itself when nothing changes (no new version)', () => {
    expect(changedSchema(saved, { kind: 'type', column: 'qty', type: 'int' })).toBe(saved)
    expect(changedSchema(saved, { kind: 'replace', fields: saved.fields })).toBe(saved)
  })

  it('refuses a narrower type, a primary-key field dropped or merged away, and unknown columns', () => {
    expect(() => changedSchema(saved, { kind: 'type', column: 'id', type: 'int' })).toThrow(
      "schema change of namespace 'orders' refused: 'id' cannot change from long to int: types only widen",
    )
    expect(() => changedSchema(saved, { kind: 'drop', column: 'id' })).toThrow(
      "'id' is part of its primary key (id)",
    )
    expect(() => changedSchema(saved, { kind: 'merge', column: 'id', into: 'note' })).toThrow(
      'part of its primary key',
    )
    expect(() => changedSchema(saved, { kind: 'rename', column: 'id', to: 'order_id' })).toThrow(
      "'id' is part of its primary key (id), which the rows landed so far hold under this name",
    )
    expect(() => changedSchema(saved, { kind: 'replace', fields: [saved.fields[1]!] })).toThrow(
      'keep it in the field list',
    )
    expect(() => changedSchema(saved, { kind: 'rename', column: 'qty', to: 'note' })).toThrow(
      "it already has a column 'note': MERGE COLUMN qty INTO note joins two",
    )
    expect(() => changedSchema(saved, { kind: 'drop', column: 'nope' })).toThrow(
      "it has no column 'nope' (its columns: id, qty, note, old_note)",
    )
  })
})

describe('relayout', () => {
  // Without a primary key, so that `id` may be renamed.
  const keyless: AppliedSchema = { namespace: saved.namespace, fields: saved.fields }
  const changed = changedSchema(
    changedSchema(changedSchema(keyless, { kind: 'drop', column: 'qty' }), {
      kind: 'merge',
      column: 'old_note',
      into: 'note',
    }),
    { kind: 'rename', column: 'id', to: 'order_id' },
  )

  it('rewrites CSV rows: dropped column gone, renamed in place, merged takes the first value not NULL', () => {
    const body = bytes('1,5,"a ""q""",\n2,,,"old"\n3,7,"",\n')
    expect(text(relayout(changed, 'csv', saved.fields, body))).toBe('1,"a ""q"""\n2,"old"\n3,""\n')
  })

  it('rewrites JSON lines by name, making values of a field widened to string text', () => {
    const toText = changedSchema(changed, { kind: 'type', column: 'order_id', type: 'string' })
    const body = bytes('{"id":1,"qty":5,"note":"a"}\n{"id":2,"old_note":"b","x":1}\n')
    expect(text(relayout(toText, 'jsonl', saved.fields, body))).toBe(
      '{"order_id":"1","note":"a"}\n{"order_id":"2","note":"b"}\n',
    )
  })

  it('moves JSON values as written: no rounding of big integers, no reprinting of decimals', () => {
    const body = bytes('{"id":9007199254740993,"qty":1.50,"note":{"k":[1.0, 2]},"old_note":null}\n')
    expect(text(relayout(changed, 'jsonl', saved.fields, body))).toBe(
      // `note` is a string field: the object lands as its own text, `1.0` and the space kept.
      '{"order_id":9007199254740993,"note":"{\\"k\\":[1.0, 2]}"}\n',
    )
    const toText = changedSchema(changed, { kind: 'type', column: 'order_id', type: 'string' })
    expect(text(relayout(toText, 'jsonl', saved.fields, bytes('{"id":12345678901234567890}\n')))).toBe(
      '{"order_id":"12345678901234567890"}\n',
    )
  })

  it('keeps the bytes of a chunk already in the layout', () => {
    const body = bytes('1,5,"a",\n')
    const same = { ...saved, sourceFields: saved.fields }
    expect(relayout(same, 'csv', saved.fields, body)).toBe(body)
  })
})

describe('evolveSaved', () => {
  it("evolves a changed schema by the source's new columns without bringing dropped ones back", () => {
    const dropped = changedSchema(saved, { kind: 'drop', column: 'qty' })
    const observed = {
      namespace: 'orders',
      fields: [
        ...saved.fields.map((f) => (f.name === 'qty' ? { ...f, type: 'long' as const } : f)),
        { name: 'tag', type: 'string' as const },
      ],
    }
    const next = evolveSaved(dropped, observed)
    expect(next.fields.map((f) => f.name)).toEqual(['id', 'note', 'old_note', 'tag'])
    expect(next.sourceFields?.map((f) => `${f.name} ${f.type}`)).toEqual([
      'id long',
      'qty long',
      'note string',
      'old_note string',
      'tag string',
    ])
    expect(evolveSaved(next, observed)).toBe(next)
  })
})

describe('schema statements', () => {
  it('reads SCHEMA DUMP, LOAD SCHEMA and the four ALTER TABLE forms', () => {
    expect(parseAdminStatement("schema dump p.ns to 'out/it''s.json'")).toEqual({
      kind: 'schema-dump',
      pipeline: 'p',
      namespace: 'ns',
      path: "out/it's.json",
    })
    expect(parseAdminStatement("LOAD SCHEMA 's.json' INTO p")).toEqual({
      kind: 'schema-load',
      pipeline: 'p',
      namespace: undefined,
      path: 's.json',
    })
    const alter = (action: string) => parseAdminStatement(`ALTER TABLE p."n s" ${action}`)
    expect(alter('DROP COLUMN c')).toMatchObject({
      kind: 'alter',
      namespace: 'n s',
      change: { kind: 'drop', column: 'c' },
    })
    expect(alter('alter column c type LONG')).toMatchObject({
      change: { kind: 'type', column: 'c', type: 'long' },
    })
    expect(alter('RENAME COLUMN a TO b')).toMatchObject({ change: { kind: 'rename', column: 'a', to: 'b' } })
    expect(alter('MERGE COLUMN a INTO b')).toMatchObject({
      change: { kind: 'merge', column: 'a', into: 'b' },
    })
    expect(() => alter('ALTER COLUMN c TYPE integer')).toThrow(
      "'integer' is not a field type (use one of string, int",
    )
    // Other ALTER TABLE forms are DuckDB's.
    expect(alter('ADD COLUMN c INT')).toBeUndefined()
  })
})

describe('parseSchemaFile', () => {
  it("reads the vendor's shape, nullable defaulting to true", () => {
    expect(
      parseSchemaFile(
        '{"fields":[{"name":"a","field_type":"long","nullable":false},{"name":"b","field_type":"json"}]}',
        'f.json',
      ),
    ).toEqual({
      kind: 'namespace',
      fields: [
        { name: 'a', type: 'long', nullable: false },
        { name: 'b', type: 'json', nullable: true },
      ],
    })
  })

  it('refuses anything else with one line: the file, the place in it and the fix', () => {
    const refusal = (text: string) => {
      try {
        parseSchemaFile(text, 's.json')
      } catch (error) {
        return (error as Error).message
      }
      return 'accepted'
    }
    expect(refusal('{"fields":[{"name":"a","field_type":"integer"}]}')).toBe(
      's.json: fields[0].field_type "integer" is not a field type: use one of string, int, long, double, boolean, date, timestamp, json',
    )
    expect(refusal('{"fields":[{"name":"a","field_type":"int","type":"int"}]}')).toBe(
      's.json: fields[0].type is not a key of a schema file: the keys there are name, field_type, nullable',
    )
    expect(refusal('{"fields":[{"name":"a","field_type":"int"},{"name":"a","field_type":"int"}]}')).toContain(
      "fields[1].name 'a' appears twice",
    )
    expect(refusal('[1]')).toContain('s.json: not a JSON object: write {"fields":')
    expect(refusal('{"fields":')).toMatch(/^s\.json: not JSON \(/)
    expect(refusal('{"fields":[]}')).toContain('fields is not a non-empty array')
  })
})

describe('describeDestinations', () => {
  const sinks = [
    { entry: 'data_sinks.warehouse', definition: { type: 'Postgres', renamesColumns: true } },
    { entry: 'data_sinks.lake', definition: { type: 'S3' } },
  ] as unknown as Parameters<typeof describeDestinations>[1]
  it('says which destinations rename the column on the next sync and which keep the old name', () => {
    expect(describeDestinations({ kind: 'rename', column: 'a', to: 'b' }, sinks)).toEqual([
      "data_sinks.warehouse (Postgres) renames column 'a' to 'b' on the next sync.",
      "data_sinks.lake (S3) does not rename columns: what it landed so far keeps 'a', rows from the next sync land as 'b'.",
    ])
    expect(describeDestinations({ kind: 'type', column: 'a', type: 'string' }, sinks)).toEqual([])
  })

  it('says that a DROP or MERGE leaves what each destination landed, and what the next rows carry', () => {
    expect(describeDestinations({ kind: 'drop', column: 'a' }, sinks)).toEqual([
      "data_sinks.warehouse (Postgres) keeps what it landed so far with 'a' (landed data is never deleted); rows from the next sync have no value for it: drop it there yourself if you want it gone.",
      "data_sinks.lake (S3) keeps what it landed so far with 'a' (landed data is never deleted); rows from the next sync have no value for it: drop it there yourself if you want it gone.",
    ])
    expect(describeDestinations({ kind: 'merge', column: 'a', into: 'b' }, sinks)[0]).toBe(
      "data_sinks.warehouse (Postgres) keeps what it landed so far with 'a' (landed data is never deleted); rows from the next sync carry its values in 'b'.",
    )
  })
})
