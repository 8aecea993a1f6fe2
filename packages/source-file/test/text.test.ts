import { isUtf8 } from 'node:buffer'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FILE_BAD_RECORD } from '../src/errors.js'
import { textFaults } from '../src/text.js'
import { fileSource, readChunks, refused, tempDir, text } from './helpers.js'

const bytes = (s: string) => new TextEncoder().encode(s)
const runs = Number(process.env.SKIPPR_PROPERTY_RUNS ?? 200)

/** `textFaults` by its definition: each line on its own, its first fault of each kind. */
function faultsLineByLine(records: Uint8Array, format: 'csv' | 'jsonl') {
  const faults: { at: number; problem: string }[] = []
  const nulEscape = Buffer.from('\\u0000')
  for (let start = 0; start < records.length; ) {
    const newline = records.indexOf(0x0a, start)
    const end = newline === -1 ? records.length : newline + 1
    const line = Buffer.from(records.subarray(start, end))
    const nul = line.indexOf(0)
    let escaped = -1
    for (
      let at = line.indexOf(nulEscape);
      format === 'jsonl' && at !== -1;
      at = line.indexOf(nulEscape, at + 1)
    ) {
      let backslashes = 0
      while (line[at - 1 - backslashes] === 0x5c) backslashes++
      if (backslashes % 2 === 0) {
        escaped = at
        break
      }
    }
    const found = [
      ...(isUtf8(line) ? [] : [{ at: start, problem: 'bytes that are not UTF-8' }]),
      ...(nul === -1
        ? []
        : [{ at: start + nul, problem: 'a NUL character (a 0x00 byte), which PostgreSQL cannot hold' }]),
      ...(escaped === -1
        ? []
        : [{ at: start + escaped, problem: 'a NUL character (\\u0000), which PostgreSQL cannot hold' }]),
    ]
    faults.push(...found.sort((a, b) => a.at - b.at))
    start = end
  }
  return faults
}

describe('textFaults', () => {
  it('finds the first NUL byte, \\u0000 escape (JSON lines) or byte that is not UTF-8', () => {
    expect(textFaults(bytes('a,b\nc,d\n'), 'csv')).toEqual([])
    expect(textFaults(bytes('a,b\nc,\0\n'), 'csv').map((f) => f.at)).toEqual([6])
    expect(textFaults(Buffer.from([0x61, 0x0a, 0x63, 0xe9, 0x0a]), 'csv')).toEqual([
      { at: 2, problem: 'bytes that are not UTF-8' },
    ])
    expect(textFaults(bytes('{"s":"a\\\\u0000"}\n'), 'jsonl')).toEqual([]) // a backslash, then u0000
    expect(textFaults(bytes('{"s":"ok"}\n{"s":"a\\u0000"}\n'), 'jsonl')).toEqual([
      { at: 18, problem: 'a NUL character (\\u0000), which PostgreSQL cannot hold' },
    ])
    expect(textFaults(bytes('{"s":"\\u0000"}\n'), 'csv')).toEqual([]) // in CSV it is six characters
  })
  it('finds the first fault of each kind in each line, in byte order, in blocks past the size of a slice', () => {
    const piece = fc.constantFrom(
      ...['a', ',', '"', 'é', '😀', '\\', '\\u0000', '\0', '\r'].map(bytes),
      ...[[0xff], [0xe9], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80]].map((b) => Uint8Array.from(b)),
    )
    const line = fc.oneof(
      { weight: 4, arbitrary: fc.array(piece, { maxLength: 12 }) },
      // Long valid lines push faults across the 16 KiB slices the search checks in turn.
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 9000 }).map((n) => [bytes('x'.repeat(n))]) },
    )
    const block = fc.tuple(fc.array(line, { maxLength: 40 }), fc.boolean()).map(([lines, ended]) => {
      const text = Buffer.concat(lines.map((pieces) => Buffer.concat([...pieces, bytes('\n')])))
      return ended ? text : text.subarray(0, Math.max(0, text.length - 1))
    })
    fc.assert(
      fc.property(block, fc.constantFrom('csv' as const, 'jsonl' as const), (records, format) => {
        expect(textFaults(records, format)).toEqual(faultsLineByLine(records, format))
      }),
      { numRuns: runs },
    )
  })
})

describe('File source: text no sink holds', () => {
  async function read(name: string, content: Uint8Array, format: 'csv' | 'jsonl') {
    const dir = await tempDir()
    await writeFile(join(dir, name), content)
    const schema = [
      { name: 'id', type: 'int' as const },
      { name: 'v', type: 'string' as const },
    ]
    const chunks = await readChunks(fileSource(dir, { path: name, format, schema, settle_seconds: 0 }))
    return { seen: text(chunks), setAside: refused(chunks) }
  }

  it('sets aside a record with a NUL at its line, and passes on the records around it', async () => {
    const { seen, setAside } = await read('nul.csv', bytes('id,v\n1,a\n2,"b\nc"\n3,x\0y\n4,z\n'), 'csv')
    expect(seen).toBe('1,a\n2,"b\nc"\n4,z\n')
    expect(setAside).toEqual([
      {
        namespace: 'nul',
        record: '3,x\uFFFDy',
        error: 'nul.csv line 5 (byte 17): a NUL character (a 0x00 byte), which PostgreSQL cannot hold',
        failureCode: FILE_BAD_RECORD,
        sourceUri: 'nul.csv',
        offsetKey: 'line',
        offsetPos: 5,
      },
    ])
  })

  it('sets aside a quoted record that holds bytes that are not UTF-8 at its first line', async () => {
    const latin1 = Buffer.concat([bytes('id,v\n1,a\n2,"caf'), Buffer.from([0xe9]), bytes('\n"\n3,b\n')])
    const { seen, setAside } = await read('latin1.csv', latin1, 'csv')
    expect(seen).toBe('1,a\n3,b\n')
    expect(setAside.map((r) => [r.record, r.offsetPos])).toEqual([['2,"caf\uFFFD\n"', 3]])
    expect(setAside[0]?.error).toMatch(/^latin1\.csv line 3 \(byte 9\): bytes that are not UTF-8$/)
  })

  it('sets aside a \\u0000 escape in JSON lines, in a last record without its newline too', async () => {
    const { seen, setAside } = await read(
      'e.jsonl',
      bytes('{"id":1,"v":"a"}\n{"id":2,"v":"\\u0000"}'),
      'jsonl',
    )
    expect(seen).toBe('{"id":1,"v":"a"}\n')
    expect(setAside.map((r) => [r.record, r.offsetPos])).toEqual([['{"id":2,"v":"\\u0000"}', 2]])
    expect(setAside[0]?.error).toMatch(/^e\.jsonl line 2 \(byte 17\): a NUL character \(\\u0000\)/)
  })
})
