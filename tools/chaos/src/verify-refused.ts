/**
 * The exactly-once check of the `--refused` chaos source: every good row of the file is in the
 * data table once, with the file's values; every bad row is in the deadletter table
 * `_dl_<pipeline>` once, with its record's text (and, when the File source set it aside, its file
 * and line); no row is missing, in both tables, or in the wrong one. Rows are told apart by
 * `rental_id`, the first field of every record (refused-rows.ts keeps bad bytes out of it).
 */
import type { Destination, Row } from './destination.js'
import { FILE_NAME } from './refused-file.js'
import {
  type BadKind,
  badKindOf,
  csvLine,
  expectedRecord,
  type FileRow,
  fileRows,
  type RowPlan,
  SOURCE_KINDS,
} from './refused-rows.js'
import { COLUMNS, EXAMPLES, PAGE_ROWS, rowDifference, selectList } from './verify.js'

export interface RefusedExpected {
  /** Rows in the file. */
  readonly rows: number
  readonly plan: RowPlan
  /** The deadletter table, unquoted: `_dl_<pipeline>`. */
  readonly deadletterTable: string
}

export interface RefusedCounts {
  /** Rows in the data table. */
  readonly landed: number
  /** Rows in the deadletter table. */
  readonly deadletters: number
  /** Good rows in the file. */
  readonly good: number
  /** Bad rows in the file, by kind. */
  readonly refusedByKind: Readonly<Partial<Record<BadKind, number>>>
}

export interface RefusedVerdict {
  /** None means every row is where it belongs, once. */
  readonly problems: readonly string[]
  readonly counts: RefusedCounts
}

/** Ids of one kind of problem: how many, and the first few to name. */
class Tally {
  count = 0
  readonly examples: string[] = []
  add(example: string): void {
    if (this.count++ < EXAMPLES) this.examples.push(example)
  }
  problem(what: string): string[] {
    return this.count === 0 ? [] : [`${this.count} ${what}: ${this.examples.join(', ')}`]
  }
}

/** The deadletters, by the rental_id their record names; records naming none under NaN. */
type Deadletters = Map<number, Row[]>

export async function verifyRefused(
  destination: Destination,
  expected: RefusedExpected,
): Promise<RefusedVerdict> {
  const dlTable = destination.qualify(expected.deadletterTable)
  const counts = { landed: 0, deadletters: 0, ...fileCounts(expected) }
  const unreadable = (table: string, error: unknown): RefusedVerdict => ({
    problems: [`cannot read ${table} in ${destination.label}: ${(error as Error).message}`],
    counts,
  })
  try {
    const [landed] = await destination.query(`SELECT count(*) AS n FROM ${destination.table}`)
    counts.landed = Number(landed?.n)
  } catch (error) {
    return unreadable(destination.table, error)
  }
  let deadletters: Deadletters
  try {
    deadletters = await readDeadletters(destination, dlTable)
    counts.deadletters = [...deadletters.values()].reduce((sum, copies) => sum + copies.length, 0)
  } catch (error) {
    return unreadable(dlTable, error)
  }
  const problems = [
    ...(await checkRows(destination, expected, deadletters)),
    ...(await unknownRows(destination, expected, deadletters)),
  ]
  return { problems, counts }
}

function fileCounts({ rows, plan }: RefusedExpected): Pick<RefusedCounts, 'good' | 'refusedByKind'> {
  // Every kind the plan draws from, in its order, also when the file has none of it.
  const refusedByKind: Partial<Record<BadKind, number>> = Object.fromEntries(plan.kinds.map((k) => [k, 0]))
  let good = 0
  for (let id = 1; id <= rows; id++) {
    const kind = badKindOf(plan, id)
    if (kind) refusedByKind[kind] = (refusedByKind[kind] ?? 0) + 1
    else good++
  }
  return { good, refusedByKind }
}

async function readDeadletters(destination: Destination, dlTable: string): Promise<Deadletters> {
  const rows = await destination.query(
    `SELECT record, namespace, error, failure_code, source_uri, offset_key, offset_pos FROM ${dlTable}`,
  )
  const byId: Deadletters = new Map()
  for (const row of rows) {
    const id = rentalIdOf(row.record)
    byId.set(id, [...(byId.get(id) ?? []), row])
  }
  return byId
}

/** The record's first field as a rental_id, or NaN. */
function rentalIdOf(record: unknown): number {
  const match = /^(\d+),/.exec(String(record))
  return match ? Number(match[1]) : Number.NaN
}

/** Walks the file's rows a page at a time, each against its copies in both tables. */
async function checkRows(
  destination: Destination,
  { rows, plan, deadletterTable }: RefusedExpected,
  deadletters: Deadletters,
): Promise<string[]> {
  const t = {
    lost: new Tally(),
    duplicated: new Tally(),
    refusedLanded: new Tally(),
    goodSetAside: new Tally(),
    inBoth: new Tally(),
    deadletterCopies: new Tally(),
    deadletterWrong: new Tally(),
    valueWrong: new Tally(),
  }
  const select = selectList(destination, [...COLUMNS, 'note'])
  for (let from = 0; from < rows; from += PAGE_ROWS) {
    const want = fileRows(plan, from, Math.min(PAGE_ROWS, rows - from))
    const landed = groupById(
      await destination.query(
        `SELECT ${select} FROM ${destination.table}
         WHERE rental_id BETWEEN ${from + 1} AND ${from + want.length} ORDER BY rental_id`,
      ),
    )
    for (const row of want) {
      const id = row.rental_id
      const data = landed.get(id) ?? []
      const aside = deadletters.get(id) ?? []
      const name = `rental_id ${id}`
      if (data.length > 0 && aside.length > 0) t.inBoth.add(name)
      else if (data.length + aside.length === 0) t.lost.add(`${name} (${row.kind ?? 'good'})`)
      else if (row.kind === undefined) {
        if (aside.length > 0) t.goodSetAside.add(name)
        else if (data.length > 1) t.duplicated.add(`${name} ×${data.length}`)
        else {
          const difference = rowDifference(data[0], row) ?? noteDifference(data[0], row)
          if (difference) t.valueWrong.add(`${name}: ${difference}`)
        }
      } else if (data.length > 0) t.refusedLanded.add(`${name} (${row.kind})`)
      else if (aside.length > 1) t.deadletterCopies.add(`${name} ×${aside.length}`)
      else {
        const difference = deadletterDifference(aside[0]!, row)
        if (difference) t.deadletterWrong.add(`${name} (${row.kind}): ${difference}`)
      }
    }
  }
  const data = destination.table
  const dl = deadletterTable
  return [
    ...t.lost.problem(`rows neither in ${data} nor in ${dl}`),
    ...t.inBoth.problem(`rows in both ${data} and ${dl}`),
    ...t.duplicated.problem(`good rows more than once in ${data}`),
    ...t.goodSetAside.problem(`good rows in ${dl} instead of ${data}`),
    ...t.valueWrong.problem(`good rows landed with other values than the file's`),
    ...t.refusedLanded.problem(`refused rows in ${data} instead of ${dl}`),
    ...t.deadletterCopies.problem(`refused rows more than once in ${dl}`),
    ...t.deadletterWrong.problem(`deadletters that do not match their line`),
  ]
}

function groupById(rows: Row[]): Map<number, Row[]> {
  const byId = new Map<number, Row[]>()
  for (const row of rows) {
    const id = Number(row.rental_id)
    byId.set(id, [...(byId.get(id) ?? []), row])
  }
  return byId
}

function noteDifference(landed: Row | undefined, want: FileRow): string | undefined {
  return landed?.note === want.note ? undefined : `note is ${String(landed?.note)}, the file has ${want.note}`
}

/**
 * The first field of a deadletter that differs from what its line says, or undefined. A record the
 * File source set aside names its file and line; one the destination refused names its batch.
 */
function deadletterDifference(deadletter: Row, row: FileRow): string | undefined {
  const record = expectedRecord(csvLine(row))
  if (deadletter.record !== record)
    return `record is ${JSON.stringify(deadletter.record)}, the line is ${JSON.stringify(record)}`
  if (deadletter.namespace !== 'rentals') return `namespace is ${String(deadletter.namespace)}`
  if (!deadletter.error || !deadletter.failure_code) return 'error or failure_code is empty'
  if (SOURCE_KINDS.includes(row.kind!)) {
    const line = row.rental_id + 1
    if (deadletter.source_uri !== FILE_NAME) return `source_uri is ${String(deadletter.source_uri)}`
    if (deadletter.offset_key !== 'line' || Number(deadletter.offset_pos) !== line)
      return `offset is ${String(deadletter.offset_key)} ${String(deadletter.offset_pos)}, the record is on line ${line}`
  } else if (!String(deadletter.offset_key).startsWith('batch ')) {
    return `offset_key is ${String(deadletter.offset_key)}, not the batch the destination refused it in`
  }
  return undefined
}

/** Rows of either table that no line of the file explains. */
async function unknownRows(
  destination: Destination,
  { rows, deadletterTable }: RefusedExpected,
  deadletters: Deadletters,
): Promise<string[]> {
  const [unknown] = await destination.query(
    `SELECT count(*) AS n FROM ${destination.table}
     WHERE rental_id IS NULL OR rental_id NOT BETWEEN 1 AND ${rows}`,
  )
  const problems: string[] = []
  const landed = Number(unknown?.n)
  if (landed > 0)
    problems.push(`${landed} rows in ${destination.table} whose rental_id the file does not have`)
  const strays = new Tally()
  for (const [id, copies] of deadletters) {
    if (!(id >= 1 && id <= rows)) for (const d of copies) strays.add(JSON.stringify(d.record))
  }
  return [...problems, ...strays.problem(`deadletters in ${deadletterTable} that no line of the file holds`)]
}
