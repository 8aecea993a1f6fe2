import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseCsv, reencodeRecord } from '../src/csv.js'
import {
  csvWatch,
  FRACTION,
  firstRecordEnd,
  NANOS,
  NUMBER,
  passOn,
  scanCsv,
  scanJsonl,
  TIME,
} from '../src/scan.js'
import { textFaults } from '../src/text.js'

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

  it('passes CRLF record ends on as LF and reports blank lines to drop', () => {
    const csv = 'a,b\r\n\r\nc,"d\r\n"\n\nx"y,z\r\n'
    const scan = scanCsv(bytes(csv), 2)
    expect(scan).toEqual({ end: csv.length, rows: 3, blanks: [5, 7, 15, 16], strays: [16], crs: [3] })
    // A CR inside a quoted field is data; a re-encoded record ends in LF.
    expect(decode(passOn(bytes('a\rb,c\n'), scanCsv(bytes('a\rb,c\n'), 2), reencodeRecord))).toBe(
      '"a\rb","c"\n',
    )
    expect(decode(passOn(bytes(csv), scan, reencodeRecord))).toBe('a,b\nc,"d\r\n"\n"x""y","z"\n')
  })

  it('refuses a record with the wrong number of fields and reads on after it', () => {
    expect(scanCsv(bytes('a,b\nc,d,e\nf,g\nh\n'), 2)).toEqual({
      end: 16,
      rows: 2,
      blanks: [],
      refused: [
        { start: 4, end: 10, problem: '3 fields where the file has 2 columns' },
        { start: 14, end: 16, problem: '1 fields where the file has 2 columns' },
      ],
    })
  })

  it('reads a quote inside an unquoted field as a character, and lists its record to re-encode', () => {
    const csv = `lat,"x"\n37°36'37.8"N,y\n1,a"b\n\nc"d,"e"\n`
    const scan = scanCsv(bytes(csv), 2)
    const [geo, ab, cd] = [csv.indexOf('37°'), csv.indexOf('1,a'), csv.indexOf('c"d')].map(
      (i) => bytes(csv.slice(0, i)).length,
    ) as [number, number, number]
    expect(scan).toEqual({ end: bytes(csv).length, rows: 4, blanks: [cd - 1, cd], strays: [geo, ab, cd] })
    expect(decode(passOn(bytes(csv), scan, reencodeRecord))).toBe(
      `lat,"x"\n"37°36'37.8""N","y"\n"1","a""b"\n"c""d","e"\n`,
    )
  })

  it('refuses text after the closing quote of a quoted field, read on as text to the record end, and lists no stray of it', () => {
    const csv = 'a,b\nx"y,"q\n"z\r\n"p",1\n'
    expect(scanCsv(bytes(csv), 2)).toEqual({
      end: csv.length,
      rows: 2,
      blanks: [],
      refused: [{ start: 4, end: 15, problem: 'text follows the closing quote of a quoted field' }],
    })
    expect(firstRecordEnd(bytes(csv.slice(4)))).toBe(11)
    expect(scanCsv(bytes('a"b,c'), 2)).toEqual({ end: 0, rows: 0, blanks: [] })
  })

  it('cuts refused records out of the body with their strays and CRs', () => {
    const csv = 'a,b\nx"y,1,2\r\nc,d\r\n'
    const scan = scanCsv(bytes(csv), 2)
    expect(scan.strays).toBeUndefined()
    expect(decode(passOn(bytes(csv), scan, reencodeRecord, [4, 13]))).toBe('a,b\nc,d\n')
    // A record refused after the scan (its text): its stray and CR are cut out with it.
    const later = 'x"y,1\r\nc,d\r\n'
    const stray = scanCsv(bytes(later), 2)
    expect(stray).toMatchObject({ strays: [0], crs: [10] })
    expect(decode(passOn(bytes(later), stray, reencodeRecord, [0, 7]))).toBe('c,d\n')
    expect(decode(passOn(bytes(later), stray, reencodeRecord, [7, 12]))).toBe('"x""y","1"\n')
  })

  it('waits for the byte after a closing quote that ends the block: it may be a doubled quote', () => {
    expect(scanCsv(bytes('a,"b"'), 2)).toEqual({ end: 0, rows: 0, blanks: [] })
    expect(scanCsv(bytes('a,"b"\r'), 2)).toEqual({ end: 0, rows: 0, blanks: [] })
    expect(scanCsv(bytes('a,"b""\n"\r\n'), 2)).toEqual({ end: 10, rows: 1, blanks: [], crs: [8] })
  })

  it('lists the values that may not fit a watched column: a fraction in an integer, a time in a date', () => {
    const watch = csvWatch(Uint8Array.of(FRACTION, TIME, 0))
    const csv =
      '1,2020-01-02,a.b:ce\n1.5,2020-01-02,x\n2,2020-01-02 10:30:00,y\n"3.0","2020-01-02T10:30",z\n15e-1,2020-01-02,q\n4,'
    // Records start at 0, 20, 37, 61 and 88; the one at 107 is incomplete.
    expect(scanCsv(bytes(csv), 3, watch)).toEqual({
      end: 107,
      rows: 5,
      blanks: [],
      misfits: [20, 0, 37, 1, 61, 0, 61, 1, 88, 0],
    })
    expect(scanCsv(bytes('1.5,x,y\n'), 3)).toEqual({ end: 8, rows: 1, blanks: [] }) // nothing watched
    const nanos = csvWatch(Uint8Array.of(NANOS))
    const stamps =
      '2020-01-02T10:30:00.123456Z\n2020-01-02T10:30:00.1234567Z\n"2020-01-02 10:30:00.000000001"\n'
    expect(scanCsv(bytes(stamps), 1, nanos)).toEqual({
      end: stamps.length,
      rows: 3,
      blanks: [],
      misfits: [28, 0, 57, 0],
    })
  })

  it('lists the values of a configured numeric column with a character no number has', () => {
    const watch = csvWatch(Uint8Array.of(NUMBER | FRACTION, 0, NUMBER))
    // Records start at 0, 12, 25, 36, 45, 53 and 75.
    const csv =
      '12,abc,-1.5\n' + // fits
      'x,abcdefgh,2\n' + // text in an int
      '"",b,"3.0"\n' + // a quoted empty string
      '4,c,1e3\r\n' + // an exponent: judged whole
      '5,d,NaN\n' + // judged whole
      '"6",eeeeeeeeeeee,"7\n"\n' + // fits, quoted; a newline is no number's
      '1234567 ,z,é\n'
    expect(scanCsv(bytes(csv), 3, watch)).toEqual({
      end: bytes(csv).length,
      rows: 7,
      blanks: [],
      crs: [43],
      misfits: [12, 0, 25, 0, 36, 2, 45, 2, 53, 2, 75, 0, 75, 2],
    })
  })

  it('finds the end of the first record', () => {
    expect(firstRecordEnd(bytes('"a\nb",c\nd'))).toBe(8)
    expect(firstRecordEnd(bytes('"a\nb'))).toBe(-1)
    expect(firstRecordEnd(bytes('abc'))).toBe(-1)
    expect(firstRecordEnd(bytes('a"b,c\nd'))).toBe(6) // a quote inside a field opens nothing
  })

  it('refuses the records that hold a text fault: the first, two in a row, a quoted one and the last', () => {
    // Records at 0, 4, 8, 12 ("k\nl" holds a NUL on its second line), 21 and 25.
    const csv = bytes('\0,b\nc,\0\n\0,f\n"k\nl\0",m\ng,h\ni,\0\n')
    const scan = scanCsv(csv, 2, undefined, textFaults(csv, 'csv'))
    const nul = 'a NUL character (a 0x00 byte), which PostgreSQL cannot hold'
    expect(scan).toEqual({
      end: csv.length,
      rows: 1,
      blanks: [],
      refused: [
        [0, 4],
        [4, 8],
        [8, 12],
        [12, 21],
        [25, 29],
      ].map(([start, end]) => ({ start, end, problem: nul })),
    })
    expect(
      decode(
        passOn(
          csv,
          scan,
          reencodeRecord,
          scan.refused?.flatMap((r) => [r.start, r.end]),
        ),
      ),
    ).toBe('g,h\n')
  })

  it('gives a record refused for its fields that problem, and leaves a fault after the end alone', () => {
    const csv = bytes('a,\0,x\nb,c\r\nd,"\0')
    expect(scanCsv(csv, 2, undefined, textFaults(csv, 'csv'))).toEqual({
      end: 11,
      rows: 1,
      blanks: [],
      crs: [9],
      refused: [{ start: 0, end: 6, problem: '3 fields where the file has 2 columns' }],
    })
  })

  it('gives a record its first fault, and drops the stray quote and CR of a record it refuses', () => {
    const csv = Buffer.concat([bytes('a,"b\n\0"\r\nc,d"'), Buffer.from([0xff]), bytes('\r\ne,f\n')])
    expect(scanCsv(csv, 2, undefined, textFaults(csv, 'csv'))).toEqual({
      end: csv.length,
      rows: 1,
      blanks: [],
      refused: [
        { start: 0, end: 9, problem: 'a NUL character (a 0x00 byte), which PostgreSQL cannot hold' },
        { start: 9, end: 16, problem: 'bytes that are not UTF-8' },
      ],
    })
  })
})

describe('scanJsonl', () => {
  it('cuts after the last newline, skipping blank lines', () => {
    expect(scanJsonl(bytes('{"a":1}\n  \n{"a":2}\r\n{"a"'))).toEqual({
      end: 20,
      rows: 2,
      blanks: [8, 11],
      crs: [18],
    })
  })

  it('refuses a line that is not an object and reads on after it', () => {
    expect(scanJsonl(bytes('{"a":1}\n[1,2]\r\n{"a":2}\n'))).toEqual({
      end: 23,
      rows: 2,
      blanks: [],
      refused: [{ start: 8, end: 15, problem: 'the line is not a JSON object' }],
    })
  })

  it('refuses the lines that hold a text fault, after the check for an object', () => {
    // Lines at 0, 15, 23, 27 (blank), 28 (a NUL byte before an escape), 45 and 54; the last is incomplete.
    const jsonl = bytes(
      '{"a":"\\u0000"}\n{"a":1}\n[\0]\n\n{"a":"\0\\u0000"}\r\n{"a":2}\r\n{"a":"\0"}\n{"a":"\0',
    )
    expect(scanJsonl(jsonl, textFaults(jsonl, 'jsonl'))).toEqual({
      end: 64,
      rows: 2,
      blanks: [27, 28],
      crs: [52],
      refused: [
        { start: 0, end: 15, problem: 'a NUL character (\\u0000), which PostgreSQL cannot hold' },
        { start: 23, end: 27, problem: 'the line is not a JSON object' },
        { start: 28, end: 45, problem: 'a NUL character (a 0x00 byte), which PostgreSQL cannot hold' },
        { start: 54, end: 64, problem: 'a NUL character (a 0x00 byte), which PostgreSQL cannot hold' },
      ],
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
function scanCsvByteByByte(bytes: Uint8Array, columns: number, flags: Uint8Array = new Uint8Array(0)) {
  const blanks: number[] = []
  const strays: number[] = []
  const misfits: number[] = []
  const crs: number[] = []
  const refused: { start: number; end: number; problem: string }[] = []
  let broken = false
  const subMicros = (dot: number) => /^\.\d{7}/.test(String.fromCharCode(...bytes.subarray(dot, dot + 8)))
  const numeric = (c: number | undefined) => c !== undefined && ((c >= 48 && c <= 57) || c === 45 || c === 46)
  const watched = (c: number | undefined, at: number) =>
    ((c === 46 || c === 101 || c === 69 ? FRACTION : c === 58 ? TIME : 0) & (flags[fields - 1] ?? 0)) !== 0 ||
    (c === 46 && ((flags[fields - 1] ?? 0) & NANOS) !== 0 && subMicros(at)) ||
    (((flags[fields - 1] ?? 0) & NUMBER) !== 0 && c !== 10 && c !== 13 && !numeric(c))
  const misfit = () => {
    if (misfits.at(-2) !== start || misfits.at(-1) !== fields - 1) misfits.push(start, fields - 1)
  }
  let [start, rows, fields] = [0, 0, 1]
  const forget = () => {
    if (strays.at(-1) === start) strays.pop()
    while (misfits.at(-2) === start) misfits.length -= 2
  }
  const result = () => {
    forget()
    return {
      end: start,
      rows,
      blanks,
      ...(strays.length ? { strays } : {}),
      ...(crs.length ? { crs } : {}),
      ...(misfits.length ? { misfits } : {}),
      ...(refused.length ? { refused } : {}),
    }
  }
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]
    if (c === 44) fields++
    else if (c === 34 && (i === start || bytes[i - 1] === 44)) {
      let close = i + 1
      while (close < bytes.length && !(bytes[close] === 34 && bytes[close + 1] !== 34))
        close += bytes[close] === 34 ? 2 : 1
      if (close >= bytes.length - 1) break
      const after = bytes[close + 1]
      if (after === 13 && close + 2 === bytes.length) break
      if (after !== 44 && after !== 10 && !(after === 13 && bytes[close + 2] === 10)) {
        broken = true // read on after the quote to the record's end
        i = close
        continue
      }
      const empty = close === i + 1 && ((flags[fields - 1] ?? 0) & NUMBER) !== 0
      // Inside quotes a CR or LF is a character of the value: no number has it.
      const text = (b: number, at: number) =>
        watched(b, at) || (((flags[fields - 1] ?? 0) & NUMBER) !== 0 && (b === 10 || b === 13))
      if (empty || bytes.subarray(i + 1, close).some((b, k) => text(b, i + 1 + k))) misfit()
      i = close
    } else if (c === 34 || (c === 13 && i + 1 < bytes.length && bytes[i + 1] !== 10)) {
      if (strays.at(-1) !== start) strays.push(start)
    } else if (watched(c, i)) {
      misfit()
    } else if (c === 10) {
      if (i === start || (i === start + 1 && bytes[start] === 13)) blanks.push(start, i + 1)
      else if (fields !== columns || broken) {
        forget()
        const problem = broken
          ? 'text follows the closing quote of a quoted field'
          : `${fields} fields where the file has ${columns} columns`
        refused.push({ start, end: i + 1, problem })
        broken = false
      } else {
        rows++
        if (bytes[i - 1] === 13 && strays.at(-1) !== start) crs.push(i - 1)
      }
      start = i + 1
      fields = 1
    }
  }
  return result()
}

describe('scanCsv agrees with the byte-by-byte rules (property)', () => {
  it('for any bytes, field count and alignment in memory', () => {
    const text = fc.string({
      unit: fc.constantFrom(
        'a',
        'bc',
        ',',
        ',,',
        '"',
        '\n',
        '\r',
        ' ',
        'é',
        '.',
        ':',
        '1.5',
        '1234567',
        'e',
        '1E3',
        '-7',
        'x1',
        '""',
        '"\n"',
        '"1"',
        '\t',
      ),
      maxLength: 80,
    })
    const flags = fc.uint8Array({ min: 0, max: FRACTION | TIME | NANOS | NUMBER, maxLength: 5 })
    fc.assert(
      fc.property(
        text,
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 7 }),
        flags,
        (csv, columns, shift, watched) => {
          const data = bytes(csv)
          // The same bytes at every offset from a 4-byte boundary, as blocks sliced from a read are.
          const shifted = new Uint8Array(data.length + shift)
          shifted.set(data, shift)
          const block = shifted.subarray(shift)
          const watch = csvWatch(watched)
          const scan = scanCsv(block, columns, watch)
          expect(scan).toEqual(scanCsvByteByByte(data, columns, watched))
          // Record by record, firstRecordEnd finds the same boundaries (refused records are cut by it).
          let at = 0
          while (at < scan.end) at += firstRecordEnd(data.subarray(at, scan.end))
          expect(at).toBe(scan.end)
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
