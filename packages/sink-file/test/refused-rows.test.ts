/**
 * A Parquet File sink meeting a value its column cannot hold: the write answers `refused`, naming
 * the row by its part in the batch (not in the namespace's file) and its record, and writes no
 * file; the batch written again without those rows, as the runner does, lands the rest.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { makeBatch, rawPart } from '@skippr/conformance'
import type { NamespaceSchema, RefusedRow, SinkBatch } from '@skippr/connector-api'
import { BAD_RECORD, withoutRecords } from '@skippr/connector-api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { fileSinkAt, readRows } from './helpers.js'

const rentals: NamespaceSchema = {
  namespace: 'rentals',
  fields: [
    { name: 'id', type: 'int' },
    { name: 'name', type: 'string' },
  ],
}
const stations: NamespaceSchema = { ...rentals, namespace: 'stations' }

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'skippr-file-refused-'))
})
afterEach(() => rm(dir, { recursive: true, force: true }))

const parquetSink = () => fileSinkAt(dir, { format: 'parquet' })

/** The batch without the refused rows, as the runner writes it again (same identity). */
function withoutRefused(batch: SinkBatch, rows: readonly RefusedRow[]): SinkBatch {
  const parts = batch.parts.map((part, index) => {
    const refused = new Set(rows.filter((r) => r.part === index).map((r) => r.row))
    const { body } = withoutRecords(part.body, part.format, refused)
    return { ...part, body, rows: part.rows - refused.size }
  })
  return { ...batch, parts }
}

describe('FileSink (parquet): a value its column cannot hold', () => {
  // Two namespaces, one in two parts: parts 0 and 2 are two files of rentals.
  const batch = makeBatch({
    pipeline: 'bikehire',
    epoch: 'e1',
    seq: 7,
    parts: [
      rawPart(rentals, 'csv', '1,"a"\n2,"b"\n', 2),
      rawPart(stations, 'jsonl', '{"id":10,"name":"s"}\n', 1),
      rawPart(rentals, 'jsonl', '{"id":3,"name":"c"}\n{"id":"abc","name":"d"}\n{"id":5,"name":"e"}\n', 3),
    ],
  })

  it('is refused, naming the row by its part in the batch; no file is written', async () => {
    const sink = parquetSink()
    for (const schema of [rentals, stations]) await sink.prepare(schema)
    expect(await sink.write(batch)).toEqual({
      status: 'refused',
      rows: [
        {
          part: 2,
          row: 1,
          code: BAD_RECORD,
          error: expect.stringMatching(/^namespace rentals, field "id": "abc" is not an int/),
        },
      ],
    })
    expect(await readdir(path.join(dir, 'out'), { recursive: true })).toEqual([])
  })

  it('written again without the refused row, lands every other row', async () => {
    const sink = parquetSink()
    for (const schema of [rentals, stations]) await sink.prepare(schema)
    const outcome = await sink.write(batch)
    if (outcome.status !== 'refused') throw new Error(`expected refused, got ${outcome.status}`)
    expect(await sink.write(withoutRefused(batch, outcome.rows))).toEqual({ status: 'landed', rows: 5 })
    expect(await readRows(path.join(dir, 'out'), 'rentals')).toEqual([
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
      { id: 3, name: 'c' },
      { id: 5, name: 'e' },
    ])
    expect(await readRows(path.join(dir, 'out'), 'stations')).toEqual([{ id: 10, name: 's' }])
  })

  it('names the refused rows of every file of the batch in one answer', async () => {
    const both = makeBatch({
      pipeline: 'bikehire',
      seq: 8,
      parts: [rawPart(stations, 'csv', 'x,"s"\n11,"t"\n', 2), ...batch.parts],
    })
    const outcome = await parquetSink().write(both)
    expect(outcome.status === 'refused' ? outcome.rows.map((r) => [r.part, r.row]) : outcome).toEqual([
      [0, 0],
      [3, 1],
    ])
  })
})
