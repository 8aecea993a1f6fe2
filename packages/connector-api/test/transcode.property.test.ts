import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { RecordFormat } from '../src/batch.js'
import { FIELD_TYPES, type Field, type FieldType } from '../src/schema.js'
import { transcode } from '../src/transcode.js'
import { referenceTranscode } from './transcode-reference.js'

const encoder = new TextEncoder()
const RUNS = 1500

/** Names that collide, need JSON or CSV quoting, or are read from a parsed line's prototype chain. */
const NAMES = ['id', 'name', 'a"b', 'x,y', 'é', 'toString', '__proto__', 'length', '']
const field: fc.Arbitrary<Field> = fc.record({
  name: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...NAMES) }, fc.string({ maxLength: 3 })),
  type: fc.constantFrom(...FIELD_TYPES),
})
const fields = fc.array(field, { maxLength: 6 })
/** A record's value of a repeated name is its last field's: these give each value to its own field. */
const uniqueFields = fc.uniqueArray(field, { selector: (f) => f.name, maxLength: 6 })

/** The README's value-mapping edge values and their neighbours, by field type. */
const EDGES: Record<FieldType, string[]> = {
  string: [
    '',
    '\\.',
    'a\nb',
    'a\r\nb',
    'a\rb',
    'nul\u0000',
    '"q"',
    'a,b',
    'back\\slash',
    'é',
    '😀',
    '\ufeff',
    '\u001f\u007f',
  ],
  int: ['0', '-1', '42', '01', '-', '1.', '+1', ' 1'],
  long: ['9007199254740991', '9007199254740993', '9223372036854775807', '-9223372036854775808'],
  double: ['-0', '-0.0', '1.5', '1e-7', '1E+5', '2.5e-3', '.5', 'NaN', 'Infinity', '-Infinity', '0.1'],
  boolean: ['true', 'false', 'TRUE', 'maybe', ''],
  date: ['2024-02-29', '0044-03-15 (BC)', 'infinity', '12345-06-07'],
  timestamp: ['2024-01-02T03:04:05.123456+02:00', '2024-01-02T03:04:05Z', '-infinity'],
  json: ['{"k":[1,null]}', '"text"', '[1]', '{', 'null', '{"é":"\\u0000"}', ' 1 '],
}
const anyEdge = fc.constantFrom(...Object.values(EDGES).flat())
const text = fc.oneof(
  { weight: 3, arbitrary: anyEdge },
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 4 }),
  fc.double().map(String),
  fc.integer().map(String),
)

/** Byte sequences that are not valid UTF-8, a byte order mark, and text. */
const rawBytes = fc.oneof(
  fc
    .constantFrom([0xff], [0xc3], [0xe2, 0x82], [0xef, 0xbb, 0xbf], [0xed, 0xa0, 0x80])
    .map((b) => new Uint8Array(b)),
  text.map((t) => encoder.encode(t)),
)

const csvCell = fc.oneof(
  fc.constant(''),
  text.filter((t) => !/[,\r\n"]/.test(t)),
  text.map((t) => `"${t.replaceAll('"', '""')}"`),
)
const csvRow = fc.array(csvCell, { maxLength: 7 }).map((cells) => cells.join(','))
const lineEnd = fc.constantFrom('\n', '\n', '\r\n', '\r', ',\n', '')
const wellFormedCsv = fc
  .array(fc.tuple(csvRow, lineEnd), { maxLength: 6 })
  .map((rows) => [encoder.encode(rows.map(([row, end]) => row + end).join(''))])
/** Anything the tokens of CSV make: unclosed quotes, text after a closing quote, stray CRs. */
const fuzzCsv = fc.array(
  fc.oneof(
    fc
      .constantFrom(',', '"', '""', '\n', '\r', '\r\n', 'a', '1', '-0.0', 'true', '\\')
      .map((t) => encoder.encode(t)),
    rawBytes,
  ),
  { maxLength: 30 },
)
const csvBody = fc
  .tuple(fc.boolean(), fc.oneof(wellFormedCsv, fuzzCsv))
  .map(([bom, chunks]) => concat(bom ? [new Uint8Array([0xef, 0xbb, 0xbf]), ...chunks] : chunks))

/** JSON values of every type, beside the ones a CSV reader makes of the edges. */
const jsonValue = fc.oneof(
  fc.constant(null),
  text,
  fc.double(),
  fc.constantFrom(-0, 2 ** 53 - 1, 2 ** 53 + 1, 2 ** 63, -(2 ** 63), 1e21, 1e-7, 123.456),
  fc.integer(),
  fc.boolean(),
  fc.jsonValue({ maxDepth: 2 }),
)
const jsonObjectLine = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...NAMES), fc.string({ maxLength: 2 })), jsonValue), {
    maxLength: 6,
  })
  .map(
    (members) =>
      `{${members.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? 'null'}`).join(',')}}`,
  )
/** Lines `trim` leaves empty, JSON that is no object, text that is no JSON, numbers past 2^53 as written. */
const oddLine = fc.constantFrom(
  '',
  '  ',
  '\t\r',
  '\u00a0',
  '\ufeff',
  '5',
  '"str"',
  '[1,2]',
  'true',
  'null',
  '{"id":9007199254740993,"name":"\\ud800"}',
  '{"id":-0.0}',
  '{"name":NaN}',
  '{"id":1,"id":2}',
  '{"__proto__":{"a":1}}',
  'not json',
  '{"name":"\u0000"}',
)
const jsonlBody = fc
  .array(fc.oneof({ weight: 4, arbitrary: jsonObjectLine }, oddLine), { maxLength: 6 })
  .chain((lines) =>
    fc.constantFrom('\n', '\r\n').map((end) => encoder.encode(lines.map((line) => line + end).join(''))),
  )

/** The part's own fields, reordered, some dropped, or with columns the part does not have. */
function headerFor(own: Field[]): fc.Arbitrary<Field[]> {
  return fc.oneof(
    fc.constant(own),
    fc.shuffledSubarray(own),
    fc.tuple(fc.shuffledSubarray(own), fc.array(field, { maxLength: 2 })).map(([a, b]) => [...a, ...b]),
  )
}

const partOf = (format: RecordFormat, own: Field[], body: Uint8Array) => ({
  namespace: 'n',
  schemaVersion: 1,
  format,
  rows: 0,
  body,
  schema: { namespace: 'n', fields: own },
})

/** What a conversion gives: its bytes (as latin1 text, for readable diffs) or its error. */
function outcome(convert: () => Uint8Array): string {
  try {
    return `bytes ${Buffer.from(convert()).toString('latin1')}`
  } catch (error) {
    const e = error as Error & { code?: string; cause?: Error }
    return `${e.constructor.name} ${e.code} ${e.message} / ${e.cause?.constructor.name} ${e.cause?.message}`
  }
}

function sameAsReference(format: RecordFormat, body: fc.Arbitrary<Uint8Array>, to: RecordFormat) {
  fc.assert(
    fc.property(
      fields.chain((own) => fc.tuple(fc.constant(own), headerFor(own), body)),
      ([own, header, bytes]) => {
        const part = partOf(format, own, bytes)
        expect(outcome(() => transcode(part, to, header))).toBe(
          outcome(() => referenceTranscode(part, to, header)),
        )
      },
    ),
    { numRuns: RUNS },
  )
}

describe('transcode gives the bytes (or the error) of the map-per-record conversion', () => {
  it('CSV to JSON lines', () => sameAsReference('csv', csvBody, 'jsonl'))
  it('CSV to CSV in other columns', () => sameAsReference('csv', csvBody, 'csv'))
  it('JSON lines to CSV', () => sameAsReference('jsonl', jsonlBody, 'csv'))
  it('the odd cases, as the reference has them', () => {
    const cases: [RecordFormat, Field[], string, RecordFormat][] = [
      // A function from the prototype chain as JSON fails, but a later line that is not JSON wins.
      ['jsonl', [{ name: 'toString', type: 'json' }], '{}\nnot json\n', 'csv'],
      ['jsonl', [{ name: 'toString', type: 'json' }], '{}\n', 'csv'],
      ['jsonl', [{ name: 'toString', type: 'string' }], 'null\n5\n', 'csv'],
      // A refused value, but a quoted field that never closes later wins.
      ['csv', [{ name: 'id', type: 'int' }], 'x\n"open', 'jsonl'],
      // After a closing quote, half of a 4-byte character ends the record and the next starts with the rest.
      ['csv', [{ name: 's', type: 'string' }], '"a"😀b\n', 'jsonl'],
    ]
    for (const [from, own, body, to] of cases) {
      const part = partOf(from, own, encoder.encode(body))
      expect(outcome(() => transcode(part, to, own))).toBe(outcome(() => referenceTranscode(part, to, own)))
    }
  })
  it('CSV of well-typed values to JSON lines, where no value is refused', () =>
    fc.assert(
      fc.property(
        uniqueFields.chain((own) => fc.tuple(fc.constant(own), typedCsv(own))),
        ([own, bytes]) => {
          const part = partOf('csv', own, bytes)
          const converted = outcome(() => transcode(part, 'jsonl', own))
          expect(converted).toBe(outcome(() => referenceTranscode(part, 'jsonl', own)))
          expect(converted.startsWith('bytes')).toBe(true)
        },
      ),
      { numRuns: RUNS },
    ))
})

/** Rows whose every field is a valid value of its type (NULL, an edge or a random one), each quoted or not. */
function typedCsv(own: Field[]): fc.Arbitrary<Uint8Array> {
  const cell = (type: FieldType) =>
    fc
      .tuple(
        fc.oneof(fc.constant(null), fc.constantFrom(...validEdges(type)), randomValid(type)),
        fc.boolean(),
      )
      .map(([value, quote]) =>
        value === null ? '' : quote || /[,\r\n"]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value,
      )
  const row = fc.tuple(...own.map((f) => cell(f.type))).map((cells) => `${cells.join(',')}\n`)
  return fc.array(row, { maxLength: 5 }).map((rows) => encoder.encode(rows.join('')))
}

const VALID = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/
function validEdges(type: FieldType): string[] {
  const edges = EDGES[type]
  if (type === 'boolean') return ['true', 'false']
  if (type === 'json') return edges.filter((e) => e !== '{')
  return ['int', 'long', 'double'].includes(type) ? edges.filter((e) => VALID.test(e)) : edges
}

function randomValid(type: FieldType): fc.Arbitrary<string> {
  switch (type) {
    case 'int':
    case 'long':
      return fc.integer().map(String)
    case 'double':
      return fc.double({ noDefaultInfinity: true, noNaN: true }).map(String)
    case 'boolean':
      return fc.constantFrom('true', 'false')
    case 'json':
      return fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v))
    default:
      return fc.string({ unit: 'grapheme', maxLength: 12 })
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(chunks))
}
