/**
 * The `--refused` file's rows: the same seed makes the same file, bad rows are spread through it
 * in every kind the sink's plan names, and a bad line's bytes are bad where the kind says while
 * its rental_id stays readable.
 */
import { describe, expect, test } from 'vitest'
import {
  badKindOf,
  csvLine,
  DESTINATION_KINDS,
  expectedRecord,
  FAR_FUTURE,
  fileRows,
  REFUSED_NOTE,
  rowPlan,
  SOURCE_KINDS,
} from '../src/index.js'

const ROWS = 4000

describe.each(['duckdb', 'postgres'] as const)('the %s file', (sink) => {
  const plan = rowPlan(5, 0.02, sink)

  test('is the same for the same seed, and another for another seed', () => {
    const lines = (seed: number) => fileRows(rowPlan(seed, 0.02, sink), 0, ROWS).map(csvLine)
    expect(Buffer.concat(lines(5)).equals(Buffer.concat(lines(5)))).toBe(true)
    expect(Buffer.concat(lines(5)).equals(Buffer.concat(lines(6)))).toBe(false)
  })

  test("holds each of the plan's kinds in each quarter of the file, about the share asked for", () => {
    expect(plan.kinds).toEqual([...SOURCE_KINDS, ...DESTINATION_KINDS[sink]])
    const rows = fileRows(plan, 0, ROWS)
    for (let quarter = 0; quarter < 4; quarter++) {
      const kinds = new Set(rows.slice((quarter * ROWS) / 4, ((quarter + 1) * ROWS) / 4).map((r) => r.kind))
      for (const kind of plan.kinds) expect(kinds).toContain(kind)
    }
    const bad = rows.filter((r) => r.kind !== undefined).length
    expect(bad).toBeGreaterThan(ROWS * 0.01)
    expect(bad).toBeLessThan(ROWS * 0.03)
    expect(rows.every((r) => r.kind === badKindOf(plan, r.rental_id))).toBe(true)
  })

  test('writes each bad kind where it says, the rental_id first and readable', () => {
    for (const row of fileRows(plan, 0, ROWS)) {
      const line = csvLine(row)
      expect(line.toString('latin1').startsWith(`${row.rental_id},`)).toBe(true)
      expect(line.includes(0xff)).toBe(row.kind === 'not-utf8')
      expect(line.includes(0x00)).toBe(row.kind === 'nul')
      expect(line.includes(FAR_FUTURE)).toBe(row.kind === 'far-future')
      expect(line.includes(REFUSED_NOTE)).toBe(row.kind === 'check')
      expect(expectedRecord(line).includes('\uFFFD')).toBe(row.kind === 'not-utf8' || row.kind === 'nul')
    }
  })
})
