/**
 * The first pass over a CSV part (diagnose.ts): read_csv over the part's records, each with its
 * index as a first field, with the load's own column types and `store_rejects`, so that a value it
 * cannot convert (`not-a-number` into INTEGER) or a record it cannot parse (a field too many, bytes
 * that are not UTF-8) is set aside in a rejects table, with its column and line, instead of stopping
 * the statement. Dates and timestamps, which the load reads as text, go through `tryFromCsvText`:
 * NULL exactly where the load's cast raises its error.
 */
import type { Field } from '@skippr/connector-api'
import { checked, checkSql, type Diagnosis, fieldChecks, query, type Refusal } from './checks.js'
import { indexedCsv, type RecordRange } from './indexed.js'
import type { Part } from './load.js'
import { readRecords } from './read.js'
import { csvReadType, ident, literal, tryFromCsvText } from './sql.js'

/** Temporary tables (the connection's own, not the file's) that read_csv's `store_rejects` fills. */
const REJECTS = '_skippr_rejects'
const REJECT_SCANS = '_skippr_reject_scans'
const DROP_REJECTS = [REJECTS, REJECT_SCANS].map((t) => `DROP TABLE IF EXISTS temp.main.${t}; `).join('')

export async function csvRefusals(
  diagnosis: Diagnosis,
  part: Part,
  ranges: readonly RecordRange[],
): Promise<Refusal[]> {
  const { conn, files } = diagnosis
  const fields = part.schema.fields
  const written = await files.write('csv', [indexedCsv(part.body, ranges)])
  try {
    const { raw, from } = readRecords(
      'csv',
      written.paths,
      [{ name: 'i', type: 'long' }, ...fields],
      storeRejects(),
    )
    const checks = fields.flatMap((field, k) => {
      const column = raw[k + 1]!
      const converts = csvReadType(field.type) !== field.type
      return fieldChecks(diagnosis, field, {
        raw: column,
        value: tryFromCsvText(column, field),
        converts,
        text: column,
      })
    })
    const found = await checked(
      conn,
      `${DROP_REJECTS}${checkSql(raw[0]!, raw.slice(1), from, checks, `range(${ranges.length})`)}`,
      checks,
    )
    const rejects = await query(
      conn,
      `SELECT csv_line, column_name, error_type, error_message FROM temp.main.${REJECTS} ORDER BY line, byte_position`,
    )
    const refusals = new Map(found.refusals.map((refusal) => [refusal.row, refusal]))
    for (const [line, column, type, message] of rejects) {
      const row = Number(/^(\d+),/.exec(String(line ?? ''))?.[1] ?? Number.NaN)
      // A record the pass cannot place is left for the check that follows it (refusals.ts).
      if (!Number.isInteger(row) || refusals.has(row) || row >= ranges.length) continue
      refusals.set(row, { row, ...rejected(fields, column, String(type), String(message)) })
    }
    return [...refusals.values()]
  } finally {
    await written.release()
  }
}

function storeRejects(): string {
  return `store_rejects = true, rejects_table = ${literal(REJECTS)}, rejects_scan = ${literal(REJECT_SCANS)}`
}

/** A record read_csv set aside: its column `cN` is field N-1 (c0 is the index). */
function rejected(
  fields: readonly Field[],
  column: unknown,
  type: string,
  message: string,
): { error: string; code: string } {
  const field = typeof column === 'string' ? fields[Number(column.slice(1)) - 1] : undefined
  const where = field ? `column ${ident(field.name)}: ` : ''
  if (type === 'CAST')
    return {
      error: `${where}${message.replace(/^Error when converting column "[^"]*"\. /, '')}`,
      code: 'Conversion',
    }
  // The counts include the index field.
  const counted = /COLUMNS$/.test(type) ? message.replace(/\d+/g, (n) => String(Number(n) - 1)) : message
  return { error: `${where}${counted}`, code: 'Invalid Input' }
}
