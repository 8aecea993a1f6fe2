import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseCsv } from '../src/csv.js'
import { firstRecordEnd, scanCsv, scanJsonl, withoutBlanks } from '../src/scan.js'

const bytes = (text: string) => new TextEncoder().encode(text)
const decode = (b: Uint8Array) => new TextDecoder().decode(b)
const runs = Number(process.env.SKIPPR_PROPERTY_RUNS ?? 200)

describe('scanCsv', () => {
  it('cuts after the last complete record and counts records', () => {
    expect(scanCsv(bytes('a,b\nc,d\ne,'), 2)).toEqual({ end: 8, rows: 2, blanks: [] })
  })

  it('keeps newlines, commas and escaped quotes inside quoted fields', () => {
    const csv = '"x\ny","1,2"\n"say ""hi""\r\n",z\n'
    expect(scanCsv(bytes(csv), 2)).toEqual({ end: csv.length, rows: 2, blanks: [] })
  })

  it('leaves a record with an open quote for the next block', () => {
    expect(scanCsv(bytes('a,b\n"open,\nstill open'), 2)).toEqual({ end: 4, rows: 1, blanks: [] })
  })

  it('handles CRLF and reports blank lines to drop', () => {
    const scan = scanCsv(bytes('a,b\r\n\r\nc,d\n\n'), 2)
    expect(scan).toEqual({ end: 12, rows: 2, blanks: [5, 7, 11, 12] })
    expect(decode(withoutBlanks(bytes('a,b\r\n\r\nc,d\n\n'), scan.end, scan.blanks))).toBe('a,b\r\nc,d\n')
  })

  it('stops before a record with the wrong number of fields', () => {
    expect(scanCsv(bytes('a,b\nc,d,e\nf,g\n'), 2)).toEqual({
      end: 4,
      rows: 1,
      blanks: [],
      bad: '3 fields where the file has 2 columns',
    })
  })

  it('finds the end of the first record', () => {
    expect(firstRecordEnd(bytes('"a\nb",c\nd'))).toBe(8)
    expect(firstRecordEnd(bytes('"a\nb'))).toBe(-1)
    expect(firstRecordEnd(bytes('abc'))).toBe(-1)
  })
})

describe('scanJsonl', () => {
  it('cuts after the last newline, skipping blank lines', () => {
    expect(scanJsonl(bytes('{"a":1}\n  \n{"a":2}\r\n{"a"'))).toEqual({ end: 20, rows: 2, blanks: [8, 11] })
  })

  it('stops before a line that is not an object', () => {
    expect(scanJsonl(bytes('{"a":1}\n[1,2]\n'))).toEqual({
      end: 8,
      rows: 1,
      blanks: [],
      bad: 'the line is not a JSON object',
    })
  })
})

/** A CSV field: plain, or quoted with the characters that force quoting. */
const field = fc.oneof(
  fc.stringMatching(/^[a-z0-9 .:-]{0,6}$/),
  fc
    .string({ unit: fc.constantFrom('a', ',', '"', '\n', '\r\n', 'é', ' '), maxLength: 8 })
    .map((s) => `"${s.replaceAll('"', '""')}"`),
)
const csvFile = (columns: number) =>
  fc
    .array(fc.tuple(fc.array(field, { minLength: columns, maxLength: columns }), fc.boolean()), {
      minLength: 1,
      maxLength: 30,
    })
    .map((records) => records.map(([fields, crlf]) => `${fields.join(',')}${crlf ? '\r\n' : '\n'}`).join(''))

/** Cuts `data` the way the File source does: scan a block from the position, keep whole records. */
function cut(data: Uint8Array, blockSize: number, scan: (b: Uint8Array) => { end: number; rows: number }) {
  const pieces: Uint8Array[] = []
  let rowCount = 0
  for (let pos = 0, want = blockSize; pos < data.length; ) {
    const block = data.subarray(pos, pos + want)
    const { end, rows } = scan(block)
    if (end === 0) {
      if (pos + want >= data.length) break
      want *= 2
      continue
    }
    pieces.push(block.subarray(0, end))
    rowCount += rows
    pos += end
    want = blockSize
  }
  return { pieces, rowCount }
}

/** The scan's rules one byte at a time: what scanCsv's word-at-a-time loop must agree with. */
function scanCsvByteByByte(bytes: Uint8Array, columns: number) {
  const blanks: number[] = []
  let [start, rows, fields] = [0, 0, 1]
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]
    if (c === 44) fields++
    else if (c === 34) {
      const close = bytes.indexOf(34, i + 1)
      if (close === -1) break
      i = close
    } else if (c === 10) {
      if (i === start || (i === start + 1 && bytes[start] === 13)) blanks.push(start, i + 1)
      else if (fields !== columns)
        return { end: start, rows, blanks, bad: `${fields} fields where the file has ${columns} columns` }
      else rows++
      start = i + 1
      fields = 1
    }
  }
  return { end: start, rows, blanks }
}

describe('scanCsv agrees with the byte-by-byte rules (property)', () => {
  it('for any bytes, field count and alignment in memory', () => {
    const text = fc.string({
      unit: fc.constantFrom('a', 'bc', ',', ',,', '"', '\n', '\r', ' ', 'é'),
      maxLength: 80,
    })
    fc.assert(
      fc.property(
        text,
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 7 }),
        (csv, columns, shift) => {
          const data = bytes(csv)
          // The same bytes at every offset from a 4-byte boundary, as blocks sliced from a read are.
          const shifted = new Uint8Array(data.length + shift)
          shifted.set(data, shift)
          const block = shifted.subarray(shift)
          expect(scanCsv(block, columns)).toEqual(scanCsvByteByByte(data, columns))
        },
      ),
      { numRuns: runs * 5 },
    )
  })
})

describe('record boundaries, for any block size (property)', () => {
  it('CSV: the pieces are whole records that join to the input', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }).chain((n) => fc.tuple(fc.constant(n), csvFile(n))),
        fc.integer({ min: 1, max: 64 }),
        ([columns, csv], blockSize) => {
          const data = bytes(csv)
          const { pieces, rowCount } = cut(data, blockSize, (b) => scanCsv(b, columns))
          const records = (text: string) => parseCsv(text, Number.POSITIVE_INFINITY).map((r) => r.fields)
          expect(decode(Buffer.concat(pieces))).toBe(csv)
          expect(rowCount).toBe(records(csv).length)
          // A cut inside a record would change what the pieces parse to.
          expect(pieces.flatMap((piece) => records(decode(piece)))).toEqual(records(csv))
        },
      ),
      { numRuns: runs },
    )
  })

  it('JSON lines: the pieces are whole lines that join to the input', () => {
    const line = fc
      .dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }))
      .map((o) => JSON.stringify(o))
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 64 }),
        (lines, blockSize) => {
          const jsonl = lines.map((l) => `${l}\n`).join('')
          const { pieces, rowCount } = cut(bytes(jsonl), blockSize, scanJsonl)
          expect(decode(Buffer.concat(pieces))).toBe(jsonl)
          expect(rowCount).toBe(lines.length)
          for (const piece of pieces) expect(decode(piece).endsWith('}\n')).toBe(true)
        },
      ),
      { numRuns: runs },
    )
  })
})
