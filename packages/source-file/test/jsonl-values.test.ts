/** JSON lines: every value's type judged from its source text, in the sample and after it. */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SAMPLE_BYTES } from '../src/schema.js'
import { fileSource, readChunks, refused, tempDir, text } from './helpers.js'

const typesOf = (fields: readonly { name: string; type: string }[]) =>
  Object.fromEntries(fields.map((f) => [f.name, f.type]))

/** Records of about `bytes` bytes, each `{"id":i,…fields}`. */
function records(bytes: number, fields: string, from = 0): string {
  const lines: string[] = []
  for (let i = from, size = 0; size < bytes; i++) {
    const line = `{"id":${i},${fields}}\n`
    lines.push(line)
    size += line.length
  }
  return lines.join('')
}

describe('JSON-lines values', () => {
  it('judges a number by its digits, not by the double JSON.parse rounds it to', async () => {
    const dir = await tempDir()
    const body =
      '{"max":9223372036854775807,"safe":9007199254740993,"min":-9223372036854775808,' +
      '"beyond":9223372036854775808,"huge":1e400,"exp":1e2,"zero":-0.0}\n'
    await writeFile(join(dir, 'big.jsonl'), body)
    const source = fileSource(dir, { path: 'big.jsonl', format: 'jsonl' })
    const [schema] = await source.discover()
    expect(typesOf(schema?.fields ?? [])).toEqual({
      max: 'long',
      safe: 'long',
      min: 'long',
      beyond: 'string',
      huge: 'string',
      exp: 'double',
      zero: 'double',
    })
    expect(text(await readChunks(source))).toBe(body)
  })

  it('widens a column when a value after the sample does not fit its type; the chunk carries the schema', async () => {
    const dir = await tempDir()
    const sampled = records(SAMPLE_BYTES + 1024, '"n":1,"day":"2020-01-01","at":"2020-01-01T00:00:00Z"')
    const late = '{"id":-1,"n":1.5,"day":"2020-01-02 10:30:00","at":"2020-01-02"}\n'
    await writeFile(join(dir, 'late.jsonl'), sampled + late)
    const source = fileSource(dir, { path: 'late.jsonl', format: 'jsonl' })
    const [discovered] = await source.discover()
    expect(typesOf(discovered?.fields ?? [])).toEqual({ id: 'int', n: 'int', day: 'date', at: 'timestamp' })
    const chunks = await readChunks(source)
    expect(text(chunks)).toBe(sampled + late)
    const schemas = chunks.flatMap((c) => (c.schema ? [typesOf(c.schema.fields)] : []))
    expect(schemas).toEqual([{ id: 'int', n: 'double', day: 'timestamp', at: 'timestamp' }])
  })

  it('sets aside a record whose value does not fit a configured column type', async () => {
    const dir = await tempDir()
    await writeFile(
      join(dir, 'set.jsonl'),
      '{"id":1,"day":"2020-01-01"}\n{"id":2,"day":"2020-01-02 10:30:00"}\n{"id":3,"day":"2020-01-03"}\n',
    )
    const schema = [
      { name: 'id', type: 'int' },
      { name: 'day', type: 'date' },
    ] as const
    const chunks = await readChunks(
      fileSource(dir, { path: 'set.jsonl', format: 'jsonl', schema: [...schema] }),
    )
    expect(text(chunks)).toBe('{"id":1,"day":"2020-01-01"}\n{"id":3,"day":"2020-01-03"}\n')
    // The configured schema, as it is: the chunk's schema is the one its rows are read by.
    expect(chunks.map((c) => [c.rows, c.schema])).toEqual([[2, { namespace: 'set', fields: schema }]])
    expect(refused(chunks)).toEqual([
      {
        namespace: 'set',
        record: '{"id":2,"day":"2020-01-02 10:30:00"}',
        error:
          'set.jsonl line 2 (byte 28): "2020-01-02 10:30:00" in column day is not a date, and loading it ' +
          'would change it (a timestamp column holds it)',
        failureCode: 'SKIPPR_FILE_BAD_RECORD',
        sourceUri: 'set.jsonl',
        offsetKey: 'line',
        offsetPos: 2,
      },
    ])
  })

  it('widens a new key from its values after the sample of it', async () => {
    const dir = await tempDir()
    const first = records(SAMPLE_BYTES + 1024, '"n":1')
    const keyed = records(64 * 1024 + 1024, '"n":1,"extra":7', 100_000)
    const late = '{"id":-1,"n":1,"extra":7.5}\n'
    await writeFile(join(dir, 'key.jsonl'), first + keyed + late)
    const chunks = await readChunks(fileSource(dir, { path: 'key.jsonl', format: 'jsonl' }))
    expect(chunks.map((c) => c.schema && typesOf(c.schema.fields))).toEqual([
      { id: 'int', n: 'int', extra: 'double' },
    ])
  })

  it('samples a record longer than the sample whole', async () => {
    const dir = await tempDir()
    const long = `{"id":1,"text":"${'x'.repeat(SAMPLE_BYTES + 1)}"}\n`
    const newKey = `{"id":2,"note":"${'y'.repeat(64 * 1024 + 1)}","n":1}\n`
    await writeFile(join(dir, 'long.jsonl'), long + newKey)
    const source = fileSource(dir, { path: 'long.jsonl', format: 'jsonl', chunk_bytes: SAMPLE_BYTES })
    const [schema] = await source.discover()
    expect(typesOf(schema?.fields ?? [])).toEqual({ id: 'int', text: 'string' })
    const chunks = await readChunks(source)
    expect(chunks.map((c) => c.rows)).toEqual([2])
    expect(chunks.at(-1)?.schema && typesOf(chunks.at(-1)!.schema!.fields)).toEqual({
      id: 'int',
      text: 'string',
      note: 'string',
      n: 'int',
    })
  })
})
