/** Records the File source cannot pass on are set aside in their chunk's `refused`; the rest pass on. */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Field, RefusedRecord, SourceChunk } from '@skippr/connector-api'
import { describe, expect, it } from 'vitest'
import { FILE_BAD_RECORD } from '../src/errors.js'
import { recordText } from '../src/refused.js'
import { SAMPLE_BYTES } from '../src/schema.js'
import { fileSource, lastOffset, readChunks, refused, rows, tempDir, text } from './helpers.js'

const utf8 = (s: string) => Buffer.from(s, 'utf8')
const latin1 = (s: string) => Buffer.from(s, 'latin1')

const CSV_SCHEMA: Field[] = [
  { name: 'id', type: 'int' },
  { name: 'v', type: 'string' },
]

/** A file of `lines` (each a line's bytes, LF or `eol` ended); the line numbers and bytes of the bad ones. */
function fileOf(lines: readonly Buffer[], eol = '\n') {
  const starts: number[] = []
  let at = 0
  for (const line of lines) {
    starts.push(at)
    at += line.length + eol.length
  }
  return { bytes: Buffer.concat(lines.flatMap((line) => [line, utf8(eol)])), starts }
}

/** The line number of each of `lines` (a line may hold newlines: a quoted CSV field). */
function lineNumbers(lines: readonly Buffer[]): number[] {
  let line = 1
  return lines.map((bytes) => {
    const number = line
    line += bytes.toString('latin1').split('\n').length
    return number
  })
}

interface Case {
  readonly kind: string
  /** The bad records of lines 3 and 7, and the text each is set aside with. */
  readonly bad: readonly [Buffer, Buffer]
  readonly texts: readonly [string, string]
  readonly problem: RegExp
  readonly schema?: Field[]
}

async function readCase(
  format: 'csv' | 'jsonl',
  lines: readonly Buffer[],
  schema: Field[] | undefined,
  eol = '\n',
): Promise<{ chunks: SourceChunk[]; starts: number[] }> {
  const dir = await tempDir()
  const { bytes, starts } = fileOf(lines, eol)
  await writeFile(join(dir, `bad.${format}`), bytes)
  const source = fileSource(dir, { path: `bad.${format}`, format, ...(schema ? { schema } : {}) })
  return { chunks: await readChunks(source), starts }
}

function expectRefused(
  found: readonly RefusedRecord[],
  file: string,
  places: readonly { line: number; byte: number }[],
  texts: readonly string[],
  problem: RegExp,
) {
  expect(found.map((r) => [r.namespace, r.sourceUri, r.offsetKey, r.failureCode])).toEqual(
    places.map(() => ['bad', file, 'line', FILE_BAD_RECORD]),
  )
  expect(found.map((r) => r.offsetPos)).toEqual(places.map((p) => p.line))
  expect(found.map((r) => r.record)).toEqual(texts)
  found.forEach((r, i) => {
    const { line, byte } = places[i] as { line: number; byte: number }
    // Where and what only: a record set aside is not read again, so there is nothing to fix and sync.
    expect(r.error.startsWith(`${file} line ${line} (byte ${byte}): `)).toBe(true)
    expect(r.error.slice(`${file} line ${line} (byte ${byte}): `.length)).toMatch(problem)
    expect(r.error).not.toMatch(/sync|fix|remove|give the column/)
    expect(r.error).not.toContain('\n')
  })
}

describe('File source: CSV records set aside', () => {
  const cases: Case[] = [
    {
      kind: 'a NUL byte',
      bad: [utf8('2,b\0b'), utf8('5,\0')],
      texts: ['2,b\uFFFDb', '5,\uFFFD'],
      problem: /^a NUL character \(a 0x00 byte\), which PostgreSQL cannot hold$/,
    },
    {
      kind: 'bytes that are not UTF-8',
      bad: [latin1('2,café'), latin1('5,"ß\n"')],
      texts: ['2,caf\uFFFD', '5,"\uFFFD\n"'],
      problem: /^bytes that are not UTF-8$/,
    },
    {
      kind: 'a value its configured column would change',
      bad: [utf8('2.5,b'), utf8('"5e1",e')],
      texts: ['2.5,b', '"5e1",e'],
      problem:
        /^"(2\.5|5e1)" in column id is not an int, and loading it would change it \(a double column holds it\)$/,
    },
    {
      kind: 'a value its configured numeric column does not hold',
      bad: [utf8('x,b'), utf8('"",e')],
      texts: ['x,b', '"",e'],
      problem: /^"x?" in column id is not an int \(a string column holds it\)$/,
    },
    {
      kind: 'the wrong number of fields',
      bad: [utf8('2,b,x'), utf8('5')],
      texts: ['2,b,x', '5'],
      problem: /^\d fields where the file has 2 columns$/,
    },
    {
      kind: 'text after a closing quote',
      bad: [utf8('2,"b"x'), utf8('5,"e\n"f')],
      texts: ['2,"b"x', '5,"e\n"f'],
      problem: /^text follows the closing quote of a quoted field$/,
    },
    {
      kind: 'a stray quote and a NUL (not passed on re-encoded)',
      bad: [utf8('2,b"\0'), utf8('5,e"\0"')],
      texts: ['2,b"\uFFFD', '5,e"\uFFFD"'],
      problem: /a NUL character/,
    },
  ]

  for (const { kind, bad, texts, problem, schema } of cases) {
    it(`yields every other record in order, and lines 3 and 7 (${kind}) as refused records`, async () => {
      const lines = [utf8('id,v'), utf8('1,a'), bad[0], utf8('3,"c\nc"'), utf8('4,d'), bad[1], utf8('6,f')]
      const { chunks, starts } = await readCase('csv', lines, schema ?? CSV_SCHEMA)
      expect(text(chunks)).toBe('1,a\n3,"c\nc"\n4,d\n6,f\n')
      expect(rows(chunks)).toBe(4)
      const numbers = lineNumbers(lines)
      expect([numbers[2], numbers[5]]).toEqual([3, 7])
      const places = [2, 5].map((i) => ({ line: numbers[i] as number, byte: starts[i] as number }))
      expectRefused(refused(chunks), 'bad.csv', places, texts, problem)
    })
  }

  it('refuses the records of lines 4 and 8, lines counted across quoted newlines and CRLF ends', async () => {
    const lines = [
      utf8('id,v'),
      utf8('1,"a\r\nb"'),
      utf8('2,x\0'),
      utf8('3,c'),
      utf8('4,"d'),
      utf8('d"'),
      utf8('5,e"\0'),
      utf8('6,"f"'),
    ]
    const { chunks, starts } = await readCase('csv', lines, CSV_SCHEMA, '\r\n')
    expect(text(chunks)).toBe('1,"a\r\nb"\n3,c\n4,"d\r\nd"\n6,"f"\n')
    const places = [
      { line: 4, byte: starts[2] as number },
      { line: 8, byte: starts[6] as number },
    ]
    expectRefused(refused(chunks), 'bad.csv', places, ['2,x\uFFFD', '5,e"\uFFFD'], /a NUL character/)
  })

  it('with an inferred schema, widens on a value after the sample and refuses only what no sink holds', async () => {
    const sampled = Array.from({ length: 40_000 }, (_, i) => utf8(`${i},x`))
    const lines = [utf8('id,v'), ...sampled, utf8('1.5,late'), latin1('7,ñ'), utf8('8,y')]
    const { chunks } = await readCase('csv', lines, undefined)
    expect(chunks.flatMap((c) => (c.schema ? [c.schema.fields.map((f) => f.type)] : []))).toEqual([
      ['double', 'string'],
    ])
    expect(text(chunks).endsWith('1.5,late\n8,y\n')).toBe(true)
    expect(refused(chunks).map((r) => [r.record, r.offsetPos])).toEqual([['7,\uFFFD', 40_003]])
  })

  it('refuses a last record without its newline once the file has settled', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'bad.csv'), 'id,v\n1,a\n2,b,c')
    const chunks = await readChunks(fileSource(dir, { path: 'bad.csv', format: 'csv', settle_seconds: 0 }))
    expect(text(chunks)).toBe('1,a\n')
    expect(refused(chunks).map((r) => [r.record, r.offsetPos])).toEqual([['2,b,c', 3]])
    expect((lastOffset(chunks) as { files: Record<string, { pos: number }> }).files['bad.csv']?.pos).toBe(14)
  })
})

describe('File source: JSON-lines records set aside', () => {
  const cases: Case[] = [
    {
      kind: 'a NUL byte',
      bad: [utf8('{"id":2,"v":"b\0"}'), utf8('{"id":6,"v":"\0"}')],
      texts: ['{"id":2,"v":"b\uFFFD"}', '{"id":6,"v":"\uFFFD"}'],
      problem: /^a NUL character \(a 0x00 byte\), which PostgreSQL cannot hold$/,
      schema: CSV_SCHEMA,
    },
    {
      kind: 'a \\u0000 escape',
      bad: [utf8('{"id":2,"v":"\\u0000"}'), utf8('{"id":6,"v":"a\\\\\\u0000"}')],
      texts: ['{"id":2,"v":"\\u0000"}', '{"id":6,"v":"a\\\\\\u0000"}'],
      problem: /^a NUL character \(\\u0000\), which PostgreSQL cannot hold$/,
      schema: CSV_SCHEMA,
    },
    {
      kind: 'bytes that are not UTF-8',
      bad: [latin1('{"id":2,"v":"café"}'), latin1('{"id":6,"v":"ß"}')],
      texts: ['{"id":2,"v":"caf\uFFFD"}', '{"id":6,"v":"\uFFFD"}'],
      problem: /^bytes that are not UTF-8$/,
    },
    {
      kind: 'a line that is not an object',
      bad: [utf8('[2]'), utf8('"six"  ')],
      texts: ['[2]', '"six"  '],
      problem: /^the line is not a JSON object$/,
      schema: CSV_SCHEMA,
    },
    {
      kind: 'invalid JSON in the sample',
      bad: [utf8('{"id":2,"v":}'), utf8('{"id":6 "v":"f"}')],
      texts: ['{"id":2,"v":}', '{"id":6 "v":"f"}'],
      problem: /^the line is not valid JSON \(.+\)$/,
    },
    {
      kind: 'a value its configured column would change',
      bad: [utf8('{"id":2.5,"v":"b"}'), utf8('{"v":"f","id":"6"}')],
      texts: ['{"id":2.5,"v":"b"}', '{"v":"f","id":"6"}'],
      problem:
        /^(2\.5|"6") in column id is not an int, and loading it would change it \(a (double|string) column holds it\)$/,
      schema: CSV_SCHEMA,
    },
  ]

  for (const { kind, bad, texts, problem, schema } of cases) {
    it(`yields every other line in order, and lines 3 and 7 (${kind}) as refused records`, async () => {
      const good = (id: number) => utf8(`{"id":${id},"v":"${String.fromCharCode(96 + id)}"}`)
      const lines = [good(1), good(2), bad[0], good(4), utf8(''), good(5), bad[1], good(7)]
      const { chunks, starts } = await readCase('jsonl', lines, schema)
      expect(text(chunks)).toBe([1, 2, 4, 5, 7].map((id) => `${good(id)}\n`).join(''))
      expect(rows(chunks)).toBe(5)
      const places = [2, 6].map((i) => ({ line: i + 1, byte: starts[i] as number }))
      expectRefused(refused(chunks), 'bad.jsonl', places, texts, problem)
      // The first chunk carries the schema its rows are read by; inferred, the refused lines shaped nothing.
      expect(chunks[0]?.schema?.fields).toEqual(schema ?? CSV_SCHEMA)
    })
  }

  it('does not infer types from records it refuses', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'bad.jsonl'), '{"id":1}\n{"id":1.5,"extra":"\\u0000"}\n{"id":3}\n')
    const source = fileSource(dir, { path: 'bad.jsonl', format: 'jsonl' })
    expect(await source.discover()).toEqual([{ namespace: 'bad', fields: [{ name: 'id', type: 'int' }] }])
    const chunks = await readChunks(source)
    expect(chunks.map((c) => [c.rows, c.schema, c.refused?.length])).toEqual([
      [2, { namespace: 'bad', fields: [{ name: 'id', type: 'int' }] }, 1],
    ])
  })

  it('learns no key from a line after the sample that is not JSON: a later record brings it', async () => {
    const dir = await tempDir()
    const filler = (from: number, bytes: number) => {
      const lines: string[] = []
      for (let i = from, size = 0; size < bytes; i++, size += lines.at(-1)!.length)
        lines.push(`{"id":${i}}\n`)
      return lines.join('')
    }
    const content = [
      filler(0, SAMPLE_BYTES + 1024),
      '{"id":-1,"z":}\n',
      filler(100_000, 64 * 1024 + 1024),
      '{"id":-2,"z":5}\n',
    ].join('')
    await writeFile(join(dir, 'keys.jsonl'), content)
    const chunks = await readChunks(fileSource(dir, { path: 'keys.jsonl', format: 'jsonl' }))
    expect(chunks.map((c) => c.schema?.fields)).toEqual([
      [
        { name: 'id', type: 'int' },
        { name: 'z', type: 'int' },
      ],
    ])
    expect(refused(chunks).map((r) => r.record)).toEqual(['{"id":-1,"z":}'])
  })
})

describe('File source: refused records where blocks are cut', () => {
  const SLOT = 64 // bytes per line: a 4096-byte block holds 64 of them, so blocks end where planned
  const NUL = 'a NUL character (a 0x00 byte), which PostgreSQL cannot hold'
  const NOT_UTF8 = 'bytes that are not UTF-8'
  /** Record `slot` in `bytes` bytes (its line end too): `slot,` then `text`, padded. */
  const record = (slot: number, text: Buffer, eol = '\n', bytes = SLOT) => {
    const head = Buffer.concat([utf8(`${slot},`), text])
    return Buffer.concat([head, utf8('.'.repeat(bytes - head.length - eol.length)), utf8(eol)])
  }

  it('refuses the first and last record of a block, two in a row, a quoted one and a last one without newline', async () => {
    const bad = new Map<number, [Buffer, string]>([
      [0, [record(0, utf8('\0')), NUL]], // the first record of block 0
      [63, [record(63, latin1('é')), NOT_UTF8]], // its last
      [130, [record(130, utf8('\0')), NUL]], // two in a row in block 2
      [131, [record(131, latin1('é'), '\r\n'), NOT_UTF8]],
      // A quoted record over two lines, its NUL on the second.
      [150, [utf8(`150,"a\n${'.'.repeat(SLOT * 2 - 10)}\0"\n`), NUL]],
      [255, [record(255, utf8('\0')), NUL]], // the last record of block 3
    ])
    const slots: Buffer[] = []
    for (let slot = 0; slot < 320; slot++) {
      if (slot === 151) continue // the second line of the quoted record
      slots.push(bad.get(slot)?.[0] ?? record(slot, utf8('ok')))
    }
    const tail = Buffer.concat([utf8('320,'), latin1('é')]) // no newline: taken once settled
    const header = utf8('id,v\n')
    const dir = await tempDir()
    await writeFile(join(dir, 'block.csv'), Buffer.concat([header, ...slots, tail]))
    const source = fileSource(dir, {
      path: 'block.csv',
      format: 'csv',
      schema: CSV_SCHEMA,
      chunk_bytes: 4096,
      settle_seconds: 0,
    })
    const chunks = await readChunks(source)
    const good = slots.filter((line) => !(line.includes(0) || line.includes(0xe9)))
    expect(text(chunks)).toBe(good.map((line) => line.toString('utf8').replace('\r\n', '\n')).join(''))
    expect(chunks.map((c) => c.rows)).toEqual([62, 64, 60, 63, 64, 0])
    const ends = chunks.map(
      (c) => (c.offset as { files: Record<string, { pos: number }> }).files['block.csv']?.pos,
    )
    expect(ends).toEqual(
      [1, 2, 3, 4, 5].map((k) => header.length + k * 4096).concat(header.length + 320 * SLOT + tail.length),
    )
    const place = (slot: number) => `block.csv line ${slot + 2} (byte ${header.length + slot * SLOT})`
    const expected = [[0, 63], [], [130, 131, 150], [255], [], [320]].map((inBlock) =>
      inBlock.map((slot) => [
        slot + 2,
        `${place(slot)}: ${slot === 320 ? NOT_UTF8 : bad.get(slot)?.[1]}`,
        recordText(slot === 320 ? tail : (bad.get(slot)?.[0] as Buffer)),
      ]),
    )
    expect(chunks.map((c) => (c.refused ?? []).map((r) => [r.offsetPos, r.error, r.record]))).toEqual(
      expected,
    )
  })
})

describe('File source: a block of records set aside', () => {
  async function readBlocks(
    format: 'csv' | 'jsonl',
    goodLine: (i: number) => string,
    badLine: (i: number) => Buffer,
  ) {
    const dir = await tempDir()
    const header = format === 'csv' ? [utf8('id,v')] : []
    const good = (from: number) => Array.from({ length: 100 }, (_, i) => utf8(goodLine(from + i)))
    const bad = Array.from({ length: 1000 }, (_, i) => badLine(i))
    const lines = [...header, ...good(0), ...bad, ...good(100)]
    await writeFile(join(dir, `block.${format}`), fileOf(lines).bytes)
    const source = fileSource(dir, {
      path: `block.${format}`,
      format,
      schema: CSV_SCHEMA,
      chunk_bytes: 4096,
    })
    return {
      source,
      good: [...good(0), ...good(100)].map((b) => `${b}\n`).join(''),
      first: header.length + 101,
    }
  }

  for (const format of ['csv', 'jsonl'] as const) {
    it(`${format}: yields chunks of refused records only, with no rows, and moves past them`, async () => {
      const goodLine = (i: number) => (format === 'csv' ? `${i},v${i}` : `{"id":${i},"v":"v${i}"}`)
      const badLine = (i: number) =>
        latin1(format === 'csv' ? `${i},é and some padding` : `{"id":${i},"v":"é and some padding"}`)
      const { source, good, first } = await readBlocks(format, goodLine, badLine)
      const chunks = await readChunks(source)
      expect(text(chunks)).toBe(good)
      expect(rows(chunks)).toBe(200)
      const set = refused(chunks)
      expect(set.map((r) => r.offsetPos)).toEqual(Array.from({ length: 1000 }, (_, i) => first + i))
      expect(set.map((r) => r.record)).toEqual(
        Array.from({ length: 1000 }, (_, i) => badLine(i).toString('utf8')),
      )
      const onlyRefused = chunks.filter((c) => c.rows === 0)
      expect(onlyRefused.length).toBeGreaterThan(3)
      for (const chunk of onlyRefused) {
        expect(chunk.body.length).toBe(0)
        expect(chunk.refused?.length).toBeGreaterThan(0)
      }
      const positions = chunks.map((c) => (c.offset as { files: Record<string, { pos: number }> }).files)
      const pos = positions.map((files) => files[`block.${format}`]?.pos as number)
      expect(pos).toEqual([...pos].sort((a, b) => a - b))
      expect(new Set(pos).size).toBe(pos.length)
    })
  }

  it('resumed from any chunk, yields neither its rows nor its refused records again', async () => {
    const badLine = (i: number) =>
      i % 7 === 3 ? utf8(`${i},x\0 and some padding`) : latin1(`${i},é and some padding`)
    const { source, good } = await readBlocks('csv', (i) => `${i},v${i}`, badLine)
    const all = await readChunks(source)
    const everyRefused = refused(all).map((r) => r.offsetPos)
    expect(everyRefused).toHaveLength(1000)
    for (let stop = 1; stop < all.length; stop++) {
      const first = await readChunks(source, undefined, { stopAfter: stop })
      const rest = await readChunks(source, lastOffset(first))
      expect(text([...first, ...rest])).toBe(good)
      expect(refused([...first, ...rest]).map((r) => r.offsetPos)).toEqual(everyRefused)
    }
  })
})
