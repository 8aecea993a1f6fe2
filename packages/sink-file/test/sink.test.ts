import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { makeBatch, rawPart } from '@skippr/conformance'
import type { Field, NamespaceSchema, WriteOutcome } from '@skippr/connector-api'
import { BAD_RECORD, hasCode, parseConnectorConfig, ROW_COUNT_MISMATCH } from '@skippr/connector-api'
import { OBJECT_CONFLICT } from '@skippr/object-sink'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { sink as definition, FILE_WRITE_FAILED } from '../src/index.js'
import { fileSinkAt, readRows } from './helpers.js'

const fields: Field[] = [
  { name: 'id', type: 'long' },
  { name: 'name', type: 'string' },
  { name: 'ok', type: 'boolean' },
  { name: 'price', type: 'double' },
  { name: 'doc', type: 'json' },
]
const schema: NamespaceSchema = { namespace: 'rentals', fields }
const CSV = '1,"a ""b"", c",true,1.5,"{""k"":[1,null]}"\n2,"",,,\n3,,false,-0.002,"""text"""\n'
const JSONL =
  '{"id":1,"name":"a \\"b\\", c","ok":true,"price":1.5,"doc":{"k":[1,null]}}\n' +
  '{"id":2,"name":"","ok":null,"price":null,"doc":null}\n' +
  '{"id":3,"name":null,"ok":false,"price":-0.002,"doc":"text"}\n'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'skippr-file-'))
})
afterEach(() => rm(dir, { recursive: true, force: true }))

const sinkFor = (format: 'csv' | 'jsonl') => fileSinkAt(dir, { format })
/** A file of batch e1/7 of pipeline bikehire, in namespace rentals: `<seq>-<part>.<ext>`. */
const file = (name: string) => path.join(dir, 'out', 'rentals', 'bikehire', 'e1', name)
/** Every finished file below the output directory, relative to it. */
const filesBelow = async (root = path.join(dir, 'out')) =>
  (await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []))
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
    .sort()
const batchOf = (format: 'csv' | 'jsonl', body: string) =>
  makeBatch({ pipeline: 'bikehire', epoch: 'e1', seq: 7, parts: [rawPart(schema, format, body, 3)] })

function errorOf(outcome: WriteOutcome): Error {
  if (!('error' in outcome)) throw new Error(`expected an error, got ${outcome.status}`)
  return outcome.error
}

describe('FileSink output', () => {
  it('csv: a header, then a csv part byte for byte, at the path derived from the identity', async () => {
    const sink = sinkFor('csv')
    await sink.prepare(schema)
    expect(await sink.write(batchOf('csv', CSV))).toEqual({ status: 'landed', rows: 3 })
    expect(await readFile(file('000000000007-0.csv'), 'utf8')).toBe(`"id","name","ok","price","doc"\n${CSV}`)
  })

  it('csv: a jsonl part becomes typed csv (numbers and booleans bare, text and JSON quoted, NULL empty)', async () => {
    const sink = sinkFor('csv')
    await sink.prepare(schema)
    await sink.write(batchOf('jsonl', JSONL))
    expect(await readFile(file('000000000007-0.csv'), 'utf8')).toBe(`"id","name","ok","price","doc"\n${CSV}`)
  })

  it('jsonl: a csv part becomes typed JSON lines', async () => {
    const sink = sinkFor('jsonl')
    await sink.prepare(schema)
    await sink.write(batchOf('csv', CSV))
    expect(await readFile(file('000000000007-0.jsonl'), 'utf8')).toBe(JSONL)
  })

  it('a retry finds its own file and is already landed; other bytes at its path are fatal and the file is kept', async () => {
    const sink = sinkFor('jsonl')
    await sink.prepare(schema)
    expect(await sink.write(batchOf('jsonl', JSONL))).toEqual({ status: 'landed', rows: 3 })
    expect(await sink.write(batchOf('jsonl', JSONL))).toEqual({ status: 'already-landed' })
    const other = await sink.write(batchOf('jsonl', '{"id":1}\n{"id":2}\n{"id":3}\n'))
    expect(other.status).toBe('fatal')
    expect(hasCode(errorOf(other), OBJECT_CONFLICT)).toBe(true)
    expect(errorOf(other).message).toContain(file('000000000007-0.jsonl'))
    // Never replaced, and no temporary file beside it.
    expect(await readdir(path.dirname(file('x')))).toEqual(['000000000007-0.jsonl'])
    expect(await readFile(file('000000000007-0.jsonl'), 'utf8')).toBe(JSONL)
  })

  it('a batch of two namespaces and two schema versions is one file per part, with a manifest listing them', async () => {
    const v2: NamespaceSchema = { ...schema, fields: [...fields, { name: 'extra', type: 'string' }] }
    const batch = makeBatch({
      pipeline: 'bikehire',
      epoch: 'e1',
      seq: 7,
      parts: [
        rawPart(schema, 'csv', CSV, 3),
        rawPart({ ...schema, namespace: 'stations' }, 'csv', CSV, 3),
        rawPart(v2, 'jsonl', '{"id":4,"extra":"x"}\n', 1),
      ],
    })
    const sink = fileSinkAt(dir, { format: 'csv', manifest: true })
    expect(await sink.write(batch)).toEqual({ status: 'landed', rows: 7 })
    expect(await filesBelow()).toEqual([
      path.join('_manifests', 'bikehire', 'e1', '000000000007.json'),
      path.join('rentals', 'bikehire', 'e1', '000000000007-0.csv'),
      path.join('rentals', 'bikehire', 'e1', '000000000007-2.csv'),
      path.join('stations', 'bikehire', 'e1', '000000000007-1.csv'),
    ])
    expect(await readFile(file('000000000007-2.csv'), 'utf8')).toBe(
      '"id","name","ok","price","doc","extra"\n4,,,,,"x"\n',
    )
    const manifest = JSON.parse(
      await readFile(path.join(dir, 'out', '_manifests', 'bikehire', 'e1', '000000000007.json'), 'utf8'),
    )
    expect(manifest.objects.map((o: { key: string; rows: number }) => [o.key, o.rows])).toEqual([
      ['rentals/bikehire/e1/000000000007-0.csv', 3],
      ['stations/bikehire/e1/000000000007-1.csv', 3],
      ['rentals/bikehire/e1/000000000007-2.csv', 1],
    ])
  })

  it('a record that does not match its type is fatal and writes nothing', async () => {
    const sink = sinkFor('jsonl')
    await sink.prepare(schema)
    const outcome = await sink.write(batchOf('csv', '1,"x",true,1.5,\n2,"y",maybe,1,\n'))
    expect(outcome.status).toBe('fatal')
    expect(hasCode(errorOf(outcome), BAD_RECORD)).toBe(true)
    expect(errorOf(outcome).message).toContain('"maybe" is not a valid boolean for field ok')
    expect(await filesBelow()).toEqual([])
  })

  it('writes a line holding only \\. as the text \\., with every row after it, in both formats', async () => {
    const lines: NamespaceSchema = { namespace: 'rentals', fields: [{ name: 'v', type: 'string' }] }
    const batch = makeBatch({ pipeline: 'p', seq: 1, parts: [rawPart(lines, 'csv', 'a\n\\.\nb\nc\n', 4)] })
    for (const format of ['csv', 'jsonl'] as const) {
      expect(await sinkFor(format).write(batch)).toEqual({ status: 'landed', rows: 4 })
      const values = (await readRows(path.join(dir, 'out'), 'rentals')).map((row) => row.v)
      expect(values).toEqual(['a', '\\.', 'b', 'c'])
      await rm(path.join(dir, 'out', 'rentals', 'p', 'epoch-1', `000000000001-0.${format}`))
    }
  })

  it('a part whose records differ from its declared count is fatal, names file, batch and counts; no file is written', async () => {
    const other: NamespaceSchema = { ...schema, namespace: 'other' }
    for (const [format, part] of [
      ['csv', rawPart(schema, 'csv', CSV, 4)],
      ['jsonl', rawPart(schema, 'jsonl', JSONL, 2)],
      // Converted to the other format: the records counted are those written.
      ['jsonl', rawPart(schema, 'csv', CSV, 2)],
    ] as const) {
      // A good part of another namespace first: it must not be written either.
      const batch = makeBatch({
        pipeline: 'bikehire',
        epoch: 'e1',
        seq: 7,
        parts: [rawPart(other, 'csv', CSV, 3), part],
      })
      const outcome = await sinkFor(format).write(batch)
      expect(outcome.status).toBe('fatal')
      expect(errorOf(outcome)).toMatchObject({
        code: ROW_COUNT_MISMATCH,
        batch: 'bikehire/e1/000000000007',
        expected: part.rows,
        loaded: 3,
      })
      expect(errorOf(outcome).message).toContain(`object ${file(`000000000007-1.${format}`)}, batch`)
      expect(await filesBelow()).toEqual([])
    }
  })

  it('an output path that cannot be created is retry with the file in the message', async () => {
    await writeFile(path.join(dir, 'out'), 'a file where the directory should be')
    const outcome = await sinkFor('csv').write(batchOf('csv', CSV))
    expect(outcome.status).toBe('retry')
    expect(hasCode(errorOf(outcome), FILE_WRITE_FAILED)).toBe(true)
    expect(errorOf(outcome).message).toContain(file('000000000007-0.csv'))
  })

  it("removes the pipeline's temporary files of dead processes when preparing; keeps live ones' and other pipelines'", async () => {
    const own = path.join(dir, 'out', 'rentals', 'bikehire', 'e1')
    const other = path.join(dir, 'out', 'rentals', 'other', 'e1')
    await mkdir(own, { recursive: true })
    await mkdir(other, { recursive: true })
    await writeFile(path.join(own, '.000000000001-0.csv.999999999.0123abcd.tmp'), 'partial')
    await writeFile(path.join(own, `.000000000002-0.csv.${process.pid}.0123abcd.tmp`), 'in progress')
    await writeFile(path.join(other, '.000000000001-0.csv.999999999.0123abcd.tmp'), 'partial')
    await sinkFor('csv').prepare(schema)
    expect(await filesBelow()).toEqual([
      path.join('rentals', 'bikehire', 'e1', `.000000000002-0.csv.${process.pid}.0123abcd.tmp`),
      path.join('rentals', 'other', 'e1', '.000000000001-0.csv.999999999.0123abcd.tmp'),
    ])
  })
})

describe('File config', () => {
  const at = { file: 'skippr.yml', path: 'data_sinks.out.File' }
  it('needs a path and a format of jsonl, csv or parquet; compression none, no prefix and no manifest unless asked', () => {
    expect(parseConnectorConfig(definition, { path: './out', format: 'csv' }, at)).toEqual({
      path: './out',
      prefix: '',
      format: 'csv',
      compression: 'none',
      manifest: false,
    })
    expect(
      parseConnectorConfig(definition, { path: './out', format: 'parquet', compression: 'zstd' }, at),
    ).toEqual({
      path: './out',
      prefix: '',
      format: 'parquet',
      compression: 'zstd',
      manifest: false,
    })
    expect(() => parseConnectorConfig(definition, { path: './out', format: 'xml' }, at)).toThrow(
      'skippr.yml: data_sinks.out.File.format:',
    )
  })
})
