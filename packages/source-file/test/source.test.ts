import { appendFile, mkdir, readFile, rename, rm, truncate, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { hasCode, type SourceChunk, type SourceOffset } from '@skippr/connector-api'
import { BikehireEncoder, writeBikehireFile } from '@skippr/source-sample'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseCsv } from '../src/csv.js'
import {
  FILE_BAD_RECORD,
  FILE_HEADER_INVALID,
  FILE_HEADER_MISMATCH,
  FILE_NO_RECORDS,
  FILE_NOT_FOUND,
  FILE_OFFSET_INVALID,
  FILE_RECORD_TOO_LONG,
} from '../src/errors.js'
import {
  fileSource,
  lastOffset,
  readChunks,
  recordingLogger,
  refused,
  rows,
  tempDir,
  text,
  writerAtWork,
} from './helpers.js'

const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
const runs = Number(process.env.SKIPPR_PROPERTY_RUNS ?? 30)

async function failure(promise: Promise<unknown>): Promise<Error & { code: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!(error instanceof Error)) throw new Error('expected a failure')
  return error as Error & { code: string }
}

describe('File source: CSV', () => {
  it('passes the records of a bikehire CSV on as they are, header stripped, schema inferred', async () => {
    const dir = await tempDir()
    await writeBikehireFile(join(dir, 'rentals.csv'), { rows: 30_000, seed: 2, format: 'csv' })
    const source = fileSource(dir, { path: 'rentals.csv', format: 'csv', chunk_bytes: 256 * 1024 })
    expect(await source.discover()).toEqual([
      {
        namespace: 'rentals',
        fields: [
          { name: 'rental_id', type: 'int' },
          { name: 'bike_id', type: 'int' },
          { name: 'start_station', type: 'int' },
          { name: 'end_station', type: 'int' },
          { name: 'start_time', type: 'timestamp' },
          { name: 'end_time', type: 'timestamp' },
          { name: 'duration_s', type: 'int' },
          { name: 'member_type', type: 'string' },
          { name: 'distance_km', type: 'double' },
        ],
      },
    ])
    const chunks = await readChunks(source)
    expect(chunks.length).toBeGreaterThan(5)
    expect(chunks.every((c) => c.namespace === 'rentals' && c.format === 'csv')).toBe(true)
    // The first chunk carries the schema the read goes by; no later one changes it.
    expect(chunks.map((c) => c.schema)).toEqual([
      (await source.discover())[0],
      ...chunks.slice(1).map(() => undefined),
    ])
    expect(rows(chunks)).toBe(30_000)
    expect(text(chunks)).toBe(decode(new BikehireEncoder(2, 'csv').encode(0, 30_000)))
  })

  it('cuts at record boundaries for any block size, quoted newlines included (property)', async () => {
    const dir = await tempDir()
    const records = [
      'id,note,score',
      '1,"multi\nline ""quoted"" note",3.5',
      '2,,7',
      '3,"",-1',
      '4,"comma, inside",0',
      '5,"ends with newline\n",2',
      '6,plain,1e3',
    ]
    const body = `${records.slice(1).join('\r\n')}\r\n`
    await writeFile(join(dir, 'notes.csv'), `${records[0]}\n${body}`)
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 90 }), async (chunkBytes) => {
        const chunks = await readChunks(
          fileSource(dir, { path: 'notes.csv', format: 'csv', chunk_bytes: chunkBytes }),
        )
        expect(text(chunks)).toBe(body.replaceAll('\r\n', '\n')) // CRLF record ends pass on as LF
        expect(rows(chunks)).toBe(6)
      }),
      { numRuns: runs },
    )
  })

  it('keeps a quote inside an unquoted field as a character: the record passes on re-encoded', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'geo.csv'), `id,lat,note\n1,37°36'37.8"N,a"b\n2,x,"q"\n3,c"d,"e,f"\n4,y,z\n`)
    const chunks = await readChunks(fileSource(dir, { path: 'geo.csv', format: 'csv' }))
    expect(rows(chunks)).toBe(4)
    expect(text(chunks)).toBe(`"1","37°36'37.8""N","a""b"\n2,x,"q"\n"3","c""d","e,f"\n4,y,z\n`)
    expect(parseCsv(text(chunks), Number.POSITIVE_INFINITY).map((r) => r.fields[1])).toEqual([
      `37°36'37.8"N`,
      'x',
      'c"d',
      'y',
    ])
  })

  it('strips a byte-order mark with the header and skips blank lines', async () => {
    const dir = await tempDir()
    await writeFile(
      join(dir, 'bom.csv'),
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a,b\n1,2\n\n3,4\n')]),
    )
    const source = fileSource(dir, { path: 'bom.csv', format: 'csv' })
    expect((await source.discover())[0]?.fields.map((f) => f.name)).toEqual(['a', 'b'])
    expect(text(await readChunks(source))).toBe('1,2\n3,4\n')
  })

  it('reads a headerless file with generated or configured column names', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'plain.csv'), '1,x\n2,y\n')
    const generated = fileSource(dir, { path: 'plain.csv', format: 'csv', header: false })
    expect(await generated.discover()).toEqual([
      {
        namespace: 'plain',
        fields: [
          { name: 'column1', type: 'int' },
          { name: 'column2', type: 'string' },
        ],
      },
    ])
    expect(text(await readChunks(generated))).toBe('1,x\n2,y\n')
    const schema = [
      { name: 'id', type: 'long' as const },
      { name: 'label', type: 'string' as const },
    ]
    const configured = fileSource(dir, {
      path: 'plain.csv',
      format: 'csv',
      header: false,
      schema,
      namespace: 'items',
    })
    expect(await configured.discover()).toEqual([{ namespace: 'items', fields: schema }])
    expect(text(await readChunks(configured))).toBe('1,x\n2,y\n')
  })

  it('uses a configured schema instead of inference, and checks the header against it', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'ids.csv'), 'id,code\n1,007\n')
    const schema = [
      { name: 'id', type: 'string' as const },
      { name: 'code', type: 'int' as const },
    ]
    const source = fileSource(dir, { path: 'ids.csv', format: 'csv', schema })
    expect(await source.discover()).toEqual([{ namespace: 'ids', fields: schema }])
    expect(text(await readChunks(source))).toBe('1,007\n')
    const renamed = fileSource(dir, { path: 'ids.csv', format: 'csv', schema: [{ name: 'id', type: 'int' }] })
    const error = await failure(readChunks(renamed))
    expect(error.code).toBe(FILE_HEADER_MISMATCH)
    expect(error.message).toBe(
      'ids.csv: header (id, code) differs from the columns of the namespace (id): every file of one source needs ' +
        'the same columns in the same order; use one source per layout',
    )
  })

  it('widens types when a later file holds wider values, and says so in the chunk', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'm-1.csv'), 'n,when\n1,2024-01-01\n')
    await writeFile(join(dir, 'm-2.csv'), 'n,when\n2.5,2024-01-02T10:00:00Z\n')
    const source = fileSource(dir, { path: 'm-*.csv', format: 'csv' })
    expect((await source.discover())[0]?.fields).toEqual([
      { name: 'n', type: 'double' },
      { name: 'when', type: 'timestamp' },
    ])
    const fresh = fileSource(dir, { path: 'm-*.csv', format: 'csv' })
    const first = await readChunks(fresh, undefined)
    // The first chunk carries the schema of the discovery, wide enough already for the second file.
    expect(first.map((c) => c.schema?.fields.map((f) => f.type))).toEqual([
      ['double', 'timestamp'],
      undefined,
    ])
    await writeFile(join(dir, 'm-3.csv'), 'n,when\nmany,2024-01-03\n')
    const more = await readChunks(fresh, lastOffset(first))
    expect(more.map((c) => c.schema?.fields.map((f) => f.type))).toEqual([['string', 'timestamp']])
  })

  it('widens a column when a value after the sample would not land as it is: fractions, times', async () => {
    const dir = await tempDir()
    // 300 KiB of integers, dates and timestamps: more than the sample; then values that would change.
    const sampled = Array.from({ length: 16_000 }, (_, i) => `${i},2020-01-02,${i},2020-01-02T00:00:00Z\n`)
    const late = '1.5,2020-01-03,7,x\n8,2020-01-02 10:30:00,"9.25",2020-01-02T00:00:00.1234567Z\n'
    await writeFile(join(dir, 'drift.csv'), `id,day,n,at\n${sampled.join('')}${late}`)
    const source = fileSource(dir, { path: 'drift.csv', format: 'csv' })
    expect((await source.discover())[0]?.fields.map((f) => f.type)).toEqual([
      'int',
      'date',
      'int',
      'timestamp',
    ])
    const chunks = await readChunks(source)
    expect(rows(chunks)).toBe(16_002)
    expect(text(chunks).endsWith(late)).toBe(true)
    // The chunk that holds them carries the widened schema, so the sink widens before it loads:
    // `x` is for the sink to refuse, but a timestamp past microseconds would be changed.
    const widened = chunks.filter((c) => c.schema)
    expect(widened.map((c) => c.schema?.fields.map((f) => f.type))).toEqual([
      ['double', 'timestamp', 'double', 'string'],
    ])
    expect(decode(widened[0]?.body ?? new Uint8Array())).toContain(late)
  })

  it('sets aside a record with a value after the sample that its configured type would change', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'typed.csv'), 'id,day\n1,2020-01-02\n2,2020-01-02 10:30:00\n3,2020-01-03\n')
    const schema = [
      { name: 'id', type: 'int' as const },
      { name: 'day', type: 'date' as const },
    ]
    const chunks = await readChunks(fileSource(dir, { path: 'typed.csv', format: 'csv', schema }))
    expect(text(chunks)).toBe('1,2020-01-02\n3,2020-01-03\n')
    expect(rows(chunks)).toBe(2)
    expect(refused(chunks).map((r) => [r.failureCode, r.offsetPos, r.record, r.error])).toEqual([
      [
        FILE_BAD_RECORD,
        3,
        '2,2020-01-02 10:30:00',
        'typed.csv line 3 (byte 20): "2020-01-02 10:30:00" in column day is not a date, and loading it ' +
          'would change it (a timestamp column holds it)',
      ],
    ])
  })

  it('samples a file read after discovery again only when its records differ from the sample', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'ids.csv'), 'id\n1\n2\n')
    const source = fileSource(dir, { path: 'ids.csv', format: 'csv' })
    expect((await source.discover())[0]?.fields).toEqual([{ name: 'id', type: 'int' }])
    expect((await readChunks(source)).map((c) => c.schema?.fields)).toEqual([[{ name: 'id', type: 'int' }]])
    await writeFile(join(dir, 'ids.csv'), 'id\n1\nx\n')
    expect((await readChunks(source)).map((c) => c.schema?.fields)).toEqual([
      [{ name: 'id', type: 'string' }],
    ])
  })
})

describe('File source: offsets', () => {
  it('resumes after appends and picks up new files; no record is read twice', async () => {
    const dir = await tempDir()
    const writer = writerAtWork()
    const source = fileSource(dir, { path: 'logs/*.csv', format: 'csv', namespace: 'logs' }, writer)
    await writeFile(join(dir, 'outside.csv'), 'id,v\n0,z\n') // not matched by the glob
    await mkdir(join(dir, 'logs'))
    await writeFile(join(dir, 'logs/a.csv'), 'id,v\n1,a\n2,b\n3,')
    const first = await readChunks(source, undefined, { signal: writer.signal() })
    expect(text(first)).toBe('1,a\n2,b\n')
    const offset = lastOffset(first)
    expect(offset).toEqual({
      files: { 'logs/a.csv': { pos: 13, ino: expect.any(String), fp: expect.any(String) } },
    })

    // The record its writer is still at work on waits.
    expect(await readChunks(source, offset, { signal: writer.signal() })).toEqual([])
    await appendFile(join(dir, 'logs/a.csv'), 'c\n4,d\n')
    await writeFile(join(dir, 'logs/b.csv'), 'id,v\n10,j\n')
    const second = await readChunks(source, offset)
    expect(second.map((c) => decode(c.body))).toEqual(['3,c\n4,d\n', '10,j\n'])
    expect(await readChunks(source, lastOffset(second))).toEqual([])
  })

  it('a run stopped after any chunk and resumed yields every record exactly once (property)', async () => {
    const dir = await tempDir()
    const encoder = new BikehireEncoder(1, 'csv')
    const header =
      'rental_id,bike_id,start_station,end_station,start_time,end_time,duration_s,member_type,distance_km\n'
    for (const [i, name] of ['a', 'b', 'c'].entries()) {
      await writeFile(join(dir, `r-${name}.csv`), header + decode(encoder.encode(i * 1000, 1000)))
    }
    const whole = decode(encoder.encode(0, 3000))
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 8 }), { maxLength: 6 }), async (stops) => {
        const source = fileSource(dir, { path: 'r-*.csv', format: 'csv', chunk_bytes: 20_000 })
        let offset: SourceChunk['offset'] | undefined
        let joined = ''
        for (const stopAfter of stops) {
          const chunks = await readChunks(source, offset, { stopAfter })
          joined += text(chunks)
          offset = lastOffset(chunks, offset)
        }
        joined += text(await readChunks(source, offset))
        expect(joined).toBe(whole)
      }),
      { numRuns: runs },
    )
  })

  it('a file written in pieces cut anywhere is read whole, once, across runs (property)', async () => {
    const content = `id,note\n${Array.from({ length: 40 }, (_, i) => `${i},"n ${i}\nwith ""quotes"", commas"`).join('\n')}\n`
    const body = content.slice(content.indexOf('\n') + 1)
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: content.length - 1 }), { maxLength: 12 }),
        async (cuts) => {
          const dir = await tempDir()
          const writer = writerAtWork()
          const source = fileSource(dir, { path: 'growing.csv', format: 'csv', chunk_bytes: 64 }, writer)
          const ends = [...cuts.sort((a, b) => a - b), content.length]
          let offset: SourceOffset | undefined
          let joined = ''
          let written = 0
          let rowCount = 0
          for (const end of ends) {
            await appendFile(join(dir, 'growing.csv'), content.slice(written, end))
            written = end
            const chunks = await readChunks(source, offset, { signal: writer.signal() })
            for (const chunk of chunks) {
              // Whole records only: a chunk cut inside a quoted field parses to fewer records.
              expect(parseCsv(decode(chunk.body), Number.POSITIVE_INFINITY)).toHaveLength(chunk.rows)
            }
            joined += text(chunks)
            rowCount += rows(chunks)
            offset = lastOffset(chunks, offset)
          }
          expect(joined).toBe(body)
          expect(rowCount).toBe(40)
        },
      ),
      { numRuns: runs },
    )
  })

  it('reads a truncated or replaced file from its start, with a warning', async () => {
    const dir = await tempDir()
    const logger = recordingLogger()
    const source = fileSource(dir, { path: 'f.csv', format: 'csv' }, { logger })
    await writeFile(join(dir, 'f.csv'), 'id\n1\n2\n3\n')
    const offset = lastOffset(await readChunks(source))
    await truncate(join(dir, 'f.csv'), 0)
    await appendFile(join(dir, 'f.csv'), 'id\n9\n')
    expect(text(await readChunks(source, offset))).toBe('9\n')
    await writeFile(join(dir, 'f.csv'), 'id\n7\n8\n5\n6\n') // longer, with other first bytes
    expect(text(await readChunks(source, offset))).toBe('7\n8\n5\n6\n')
    expect(logger.lines.filter((l) => l.level === 'warn').map((l) => [l.message, l.fields?.file])).toEqual([
      ['file was replaced or truncated since it was read: reading it from the start', 'f.csv'],
      ['file was replaced or truncated since it was read: reading it from the start', 'f.csv'],
    ])
  })

  it('continues a file rewritten with the same beginning (a regenerated, longer export)', async () => {
    const dir = await tempDir()
    const source = fileSource(dir, { path: 'export.csv', format: 'csv' })
    await writeBikehireFile(join(dir, 'export.csv'), { rows: 500, format: 'csv' })
    const offset = lastOffset(await readChunks(source))
    await writeBikehireFile(join(dir, 'export.csv'), { rows: 800, format: 'csv' })
    expect(text(await readChunks(source, offset))).toBe(
      decode(new BikehireEncoder(1, 'csv').encode(500, 300)),
    )
  })

  it('does not read again a file rewritten through a temporary file and a rename (new inode, same bytes)', async () => {
    const dir = await tempDir()
    const source = fileSource(dir, { path: 'out-*.csv', format: 'csv', namespace: 'out' })
    await writeFile(join(dir, 'out-a.csv'), 'id\n1\n2\n')
    await writeFile(join(dir, 'out-b.csv'), 'id\n10\n')
    const offset = lastOffset(await readChunks(source))
    await writeFile(join(dir, 'tmp'), 'id\n1\n2\n')
    await rename(join(dir, 'tmp'), join(dir, 'out-a.csv'))
    await appendFile(join(dir, 'out-b.csv'), '11\n')
    const next = await readChunks(source, offset)
    expect(text(next)).toBe('11\n')
    await appendFile(join(dir, 'out-a.csv'), '3\n')
    expect(text(await readChunks(source, lastOffset(next)))).toBe('3\n')
  })

  it('follows a file renamed by log rotation instead of reading it again', async () => {
    const dir = await tempDir()
    const source = fileSource(dir, { path: 'app.jsonl*', format: 'jsonl', namespace: 'app' })
    await writeFile(join(dir, 'app.jsonl'), '{"n":1}\n{"n":2}\n')
    const offset = lastOffset(await readChunks(source))
    await appendFile(join(dir, 'app.jsonl'), '{"n":3}\n')
    await rename(join(dir, 'app.jsonl'), join(dir, 'app.jsonl.1'))
    await writeFile(join(dir, 'app.jsonl'), '{"n":4}\n')
    const after = await readChunks(source, offset)
    expect(after.map((c) => decode(c.body))).toEqual(['{"n":4}\n', '{"n":3}\n'])
    expect(Object.keys((lastOffset(after) as { files: object }).files).sort()).toEqual([
      'app.jsonl',
      'app.jsonl.1',
    ])
  })

  it('drops files that are gone from the offset', async () => {
    const dir = await tempDir()
    const source = fileSource(dir, { path: '*.jsonl', format: 'jsonl', namespace: 'events' })
    await writeFile(join(dir, 'a.jsonl'), '{"n":1}\n')
    await writeFile(join(dir, 'b.jsonl'), '{"n":2}\n')
    const offset = lastOffset(await readChunks(source))
    await rm(join(dir, 'a.jsonl'))
    await writeFile(join(dir, 'c.jsonl'), '{"n":3}\n')
    const after = await readChunks(source, offset)
    expect(text(after)).toBe('{"n":3}\n')
    expect(Object.keys((lastOffset(after) as { files: object }).files)).toEqual(['b.jsonl', 'c.jsonl'])
  })

  it('refuses an offset it did not write', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'f.csv'), 'a\n1\n')
    const source = fileSource(dir, { path: 'f.csv', format: 'csv' })
    for (const bad of [{ row: 3 }, { files: { 'f.csv': { pos: 'x' } } }, 7] as SourceOffset[]) {
      const error = await failure(readChunks(source, bad))
      expect(error.code).toBe(FILE_OFFSET_INVALID)
      expect(error.message).toMatch(/reset the pipeline to start over$/)
    }
  })
})

describe('File source: follow mode', () => {
  it('polls for appended records and new files until the signal aborts', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'live-1.jsonl'), '{"n":1}\n')
    const controller = new AbortController()
    const seen: string[] = []
    const source = fileSource(dir, { path: 'live-*.jsonl', format: 'jsonl' }, { pollMs: 20 })
    const reading = (async () => {
      for await (const chunk of source.read(undefined, { signal: controller.signal, follow: true })) {
        seen.push(decode(chunk.body))
        if (seen.length === 1) await appendFile(join(dir, 'live-1.jsonl'), '{"n":2}\n')
        if (seen.length === 2) await writeFile(join(dir, 'live-2.jsonl'), '{"n":3}\n')
        if (seen.length === 3) controller.abort()
      }
    })()
    await reading
    expect(seen).toEqual(['{"n":1}\n', '{"n":2}\n', '{"n":3}\n'])
  })

  it('without follow, reads a last record without its newline once the file stops changing', async () => {
    const dir = await tempDir()
    const logger = recordingLogger()
    await writeFile(join(dir, 'tail.jsonl'), '{"n":1}\n{"n":2}')
    await writeFile(join(dir, 'tail.csv'), 'id,v\n1,a\n2,"b\nc"')
    const config = { settle_seconds: 0.3 }
    const jsonl = fileSource(dir, { path: 'tail.jsonl', format: 'jsonl', ...config }, { logger })
    const started = Date.now()
    const chunks = await readChunks(jsonl)
    expect(Date.now() - started).toBeGreaterThanOrEqual(200) // it waited for the file to settle
    expect(chunks.map((c) => [decode(c.body), c.rows])).toEqual([
      ['{"n":1}\n', 1],
      ['{"n":2}\n', 1],
    ])
    const end = lastOffset(chunks) as { files: Record<string, { pos: number }> }
    expect(end.files['tail.jsonl']?.pos).toBe(15) // the file's end: no newline was read
    expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([])

    const csv = await readChunks(fileSource(dir, { path: 'tail.csv', format: 'csv', ...config }))
    expect(text(csv)).toBe('1,a\n2,"b\nc"\n')
    // The writer adds the newline and more: the newline is a blank line, the record after it new.
    await appendFile(join(dir, 'tail.jsonl'), '\n{"n":3}\n')
    expect(text(await readChunks(jsonl, end))).toBe('{"n":3}\n')
  })

  it('without follow, fails a file that ends inside a quoted field once it stops changing, at its line', async () => {
    const dir = await tempDir()
    // A stray quote at the start of a field opens a quoted section that swallows the rest.
    await writeFile(join(dir, 'open.csv'), 'id,v\n1,a\n2,"b\n3,c\n4,d\n')
    const source = fileSource(dir, { path: 'open.csv', format: 'csv', settle_seconds: 0 })
    const seen: string[] = []
    const reading = (async () => {
      for await (const chunk of source.read(undefined, {
        signal: new AbortController().signal,
        follow: false,
      }))
        seen.push(decode(chunk.body))
    })()
    await expect(reading).rejects.toThrow(
      'open.csv: line 3 (byte 9): the file ends inside a quoted field opened in this record: close the quote',
    )
    // The file is smaller than a sample: discovery, reading it to its end, meets the quote first.
    expect(seen).toEqual([])
  })

  it('in follow mode, takes a last record without its newline once the file is idle', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'live.csv'), 'id,v\n1,a\n2,b')
    const source = fileSource(dir, { path: 'live.csv', format: 'csv', settle_seconds: 0.2 })
    const controller = new AbortController()
    const seen: string[] = []
    for await (const chunk of source.read(undefined, { signal: controller.signal, follow: true })) {
      seen.push(decode(chunk.body))
      if (seen.length === 2) controller.abort()
    }
    expect(seen).toEqual(['1,a\n', '2,b\n'])
  })
})

describe('File source: JSON lines', () => {
  it('passes lines on as they are and infers keys and types from a sample', async () => {
    const dir = await tempDir()
    const lines = [
      '{"id":1,"tags":["a"],"meta":{"k":1},"at":"2024-01-01T00:00:00Z","ok":true}',
      '',
      '{"id":2,"price":9.5,"at":"2024-01-02T00:00:00Z","ok":false,"note":null}',
    ]
    await writeFile(join(dir, 'events.jsonl'), `${lines.join('\n')}\n`)
    const source = fileSource(dir, { path: 'events.jsonl', format: 'jsonl' })
    expect(await source.discover()).toEqual([
      {
        namespace: 'events',
        fields: [
          { name: 'id', type: 'int' },
          { name: 'tags', type: 'json' },
          { name: 'meta', type: 'json' },
          { name: 'at', type: 'timestamp' },
          { name: 'ok', type: 'boolean' },
          { name: 'price', type: 'double' },
          { name: 'note', type: 'string' },
        ],
      },
    ])
    const chunks = await readChunks(source)
    expect(chunks.map((c) => [c.format, c.rows])).toEqual([['jsonl', 2]])
    expect(text(chunks)).toBe(`${lines[0]}\n${lines[2]}\n`)
  })

  it('samples a settled last record with the rest of the file: nested beside a scalar stays json', async () => {
    // As a string column, DuckDB would print the nested values anew (`2e+286` as `2e286`).
    const dir = await tempDir()
    await writeFile(join(dir, 'mixed.jsonl'), '{"j":{"a":2e+286}}\n{"j":[1]}\n{"j":true}')
    const source = fileSource(dir, { path: 'mixed.jsonl', format: 'jsonl', settle_seconds: 0 })
    expect(await source.discover()).toEqual([{ namespace: 'mixed', fields: [{ name: 'j', type: 'json' }] }])
  })

  it('passes CRLF line ends on as LF, so files of either kind can share a batch', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'e-1.jsonl'), '{"s":"a\\r\\nb"}\r\n{"s":"c"}  \r\n')
    await writeFile(join(dir, 'e-2.jsonl'), '{"s":"d"}\n')
    const chunks = await readChunks(fileSource(dir, { path: 'e-*.jsonl', format: 'jsonl', namespace: 'e' }))
    expect(text(chunks)).toBe('{"s":"a\\r\\nb"}\n{"s":"c"}  \n{"s":"d"}\n')
  })

  it('adds a key first seen after the sample to the schema, so no sink drops it', async () => {
    const dir = await tempDir()
    // 6,000 records of ~60 bytes: the 256 KiB sample ends near record 4,400, all in one 1 MiB block.
    const records = Array.from({ length: 6000 }, (_, i) => {
      const base = { id: i + 1, name: `item ${i + 1}`, padding: 'x'.repeat(20) }
      if (i === 5000) return { ...base, score: 2.5 }
      if (i === 5500) return { ...base, comment: null }
      return base
    })
    await writeFile(join(dir, 'items.jsonl'), records.map((r) => `${JSON.stringify(r)}\n`).join(''))
    const source = fileSource(dir, { path: 'items.jsonl', format: 'jsonl' })
    expect((await source.discover())[0]!.fields.map((f) => f.name)).toEqual(['id', 'name', 'padding'])
    const chunks = await readChunks(source)
    expect(chunks).toHaveLength(1)
    expect(chunks[0]!.schema?.fields).toEqual([
      { name: 'id', type: 'int' },
      { name: 'name', type: 'string' },
      { name: 'padding', type: 'string' },
      { name: 'score', type: 'double' },
      { name: 'comment', type: 'string' },
    ])
    expect(rows(chunks)).toBe(6000)
  })

  it('a run after a file with a new key was added carries the key in the schema of its first chunk', async () => {
    const dir = await tempDir()
    const config = { path: 'events-*.jsonl', format: 'jsonl' } as const
    await writeFile(join(dir, 'events-1.jsonl'), '{"id":1}\n')
    const before = await readChunks(fileSource(dir, config))
    await writeFile(join(dir, 'events-2.jsonl'), '{"id":2,"score":7}\n')
    // A new run discovers both files, so its sample holds `score` already; the runner's saved
    // schema is the first run's, and learns of `score` only from a chunk.
    const after = await readChunks(fileSource(dir, config), lastOffset(before))
    expect(after.map((c) => [text([c]), c.schema?.fields])).toEqual([
      [
        '{"id":2,"score":7}\n',
        [
          { name: 'id', type: 'int' },
          { name: 'score', type: 'int' },
        ],
      ],
    ])
  })

  it('sets aside a line that is not a JSON object, naming file, line and byte, and passes on the lines around it', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'bad.jsonl'), '{"a":1}\n{"a":2}\n[3]\n{"a":4}\n')
    const source = fileSource(dir, {
      path: 'bad.jsonl',
      format: 'jsonl',
      schema: [{ name: 'a', type: 'int' }],
    })
    const chunks = await readChunks(source)
    expect(chunks.map((c) => [decode(c.body), c.rows])).toEqual([['{"a":1}\n{"a":2}\n{"a":4}\n', 3]])
    expect(refused(chunks)).toEqual([
      {
        namespace: 'bad',
        record: '[3]',
        error: 'bad.jsonl line 3 (byte 16): the line is not a JSON object',
        failureCode: FILE_BAD_RECORD,
        sourceUri: 'bad.jsonl',
        offsetKey: 'line',
        offsetPos: 3,
      },
    ])
  })

  it('infers the schema without invalid JSON found while sampling, and sets it aside with its place', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'broken.jsonl'), '{"a":1}\n{"a": "x", }\n{"a":3}\n')
    const source = fileSource(dir, { path: 'broken.jsonl', format: 'jsonl' })
    expect(await source.discover()).toEqual([{ namespace: 'broken', fields: [{ name: 'a', type: 'int' }] }])
    const chunks = await readChunks(source)
    expect(text(chunks)).toBe('{"a":1}\n{"a":3}\n')
    const [line] = refused(chunks)
    expect([line?.record, line?.offsetPos, line?.failureCode]).toEqual(['{"a": "x", }', 2, FILE_BAD_RECORD])
    expect(line?.error).toMatch(/^broken\.jsonl line 2 \(byte 8\): the line is not valid JSON \(.+\)$/)
  })
})

describe('File source: bad input', () => {
  it('sets aside a record with the wrong number of fields, naming file, line and byte', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'rows.csv'), 'a,b\n1,2\n"x\ny",3\n4,5,6\n7,8\n')
    const source = fileSource(dir, { path: 'rows.csv', format: 'csv' })
    const chunks = await readChunks(source)
    expect(text(chunks)).toBe('1,2\n"x\ny",3\n7,8\n')
    expect(rows(chunks)).toBe(3)
    const [record] = refused(chunks)
    expect([record?.record, record?.offsetPos]).toEqual(['4,5,6', 5])
    expect(record?.error).toBe('rows.csv line 5 (byte 16): 3 fields where the file has 2 columns')
  })

  it('rejects a header with an empty or repeated name', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'h1.csv'), 'a,,c\n1,2,3\n')
    await writeFile(join(dir, 'h2.csv'), 'a,b,a\n1,2,3\n')
    const empty = await failure(fileSource(dir, { path: 'h1.csv', format: 'csv' }).discover())
    expect(empty.code).toBe(FILE_HEADER_INVALID)
    expect(empty.message).toBe(
      'h1.csv: header row has an empty column name: fix the header, or set header: false and schema',
    )
    const repeated = await failure(fileSource(dir, { path: 'h2.csv', format: 'csv' }).discover())
    expect(repeated.message).toBe(
      'h2.csv: header row names the column a twice: fix the header, or set header: false and schema',
    )
  })

  it('refuses files of one source whose headers differ', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'p-1.csv'), 'a,b\n1,2\n')
    await writeFile(join(dir, 'p-2.csv'), 'b,a\n1,2\n')
    const error = await failure(readChunks(fileSource(dir, { path: 'p-*.csv', format: 'csv' })))
    expect(error.code).toBe(FILE_HEADER_MISMATCH)
    expect(error.message).toMatch(
      /^p-2\.csv: header \(b, a\) differs from the columns of the namespace \(a, b\)/,
    )
  })

  it('gives up on a record that does not end within 64 MiB (an unbalanced quote)', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'quote.csv'), `a,b\n1,2\n3,"${'x'.repeat(64 * 1024 * 1024)}\n`)
    const error = await failure(
      readChunks(fileSource(dir, { path: 'quote.csv', format: 'csv', header: true })),
    )
    expect(error.code).toBe(FILE_RECORD_TOO_LONG)
    expect(error.message).toBe(
      'quote.csv: line 3 (byte 8): no end of record within 64 MiB: look for an unbalanced quote there',
    )
  })

  it('fails discovery without files, or without records to infer from', async () => {
    const dir = await tempDir()
    const none = await failure(
      fileSource(dir, { path: 'in/*.csv', format: 'csv', namespace: 'x' }).discover(),
    )
    expect(none.code).toBe(FILE_NOT_FOUND)
    expect(none.message).toMatch(/^File source: no file matches in\/\*\.csv /)
    await writeFile(join(dir, 'empty.jsonl'), '')
    const empty = await failure(fileSource(dir, { path: 'empty.jsonl', format: 'jsonl' }).discover())
    expect(empty.code).toBe(FILE_NO_RECORDS)
    expect(hasCode(empty, FILE_NO_RECORDS)).toBe(true)
  })

  it('reads nothing, without error, while no file matches', async () => {
    const dir = await tempDir()
    expect(await readChunks(fileSource(dir, { path: 'later/*.csv', format: 'csv', namespace: 'x' }))).toEqual(
      [],
    )
  })
})

describe('File source: reads the bytes it was given', () => {
  it('keeps each chunk body intact after later chunks are read', async () => {
    const dir = await tempDir()
    await writeBikehireFile(join(dir, 'k.csv'), { rows: 5000, format: 'csv' })
    const chunks = await readChunks(fileSource(dir, { path: 'k.csv', format: 'csv', chunk_bytes: 8192 }))
    const file = await readFile(join(dir, 'k.csv'), 'utf8')
    expect(text(chunks)).toBe(file.slice(file.indexOf('\n') + 1))
  })
})
