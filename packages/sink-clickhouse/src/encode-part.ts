/**
 * A part as the one RowBinary insert that lands it, checked whole before anything is sent: its
 * records counted against the rows it declares, every value against its column. Each row carries
 * the part's key in `_skippr_batch`, so the same part always encodes to the same bytes: the same
 * block, which a ReplicatedMergeTree recognises when a retry inserts it again.
 */
import type { RefusedRow } from '@skippr/connector-api'
import { BAD_RECORD, BATCH_COLUMN, hasCode, RowCountMismatchError } from '@skippr/connector-api'
import type { Column } from './column-types.js'
import { RECORD_REFUSED, StatementRejectedError, UnsupportedColumnError, VALUE_REFUSED } from './errors.js'
import { type Cell, type Part, type PartRecord, readRecords } from './part-records.js'
import { encodedString, RowBinaryWriter, type TargetColumn } from './row-binary.js'
import { quoteName } from './sql.js'

export interface PartContext {
  /** The part's index in the batch, as refused rows name it. */
  readonly index: number
  /** `partKey` of the part. */
  readonly key: string
  /** `batchKey` of the batch, for a count mismatch. */
  readonly batch: string
  /** The table, quoted as in SQL. */
  readonly table: string
  /** The table's columns as the server has them now. */
  readonly columns: readonly Column[]
  readonly target: string
}

export type EncodedPart =
  | { readonly sql: string; readonly body: Uint8Array; readonly rows: number; readonly refused: RefusedRow[] }
  | { readonly error: Error }

/** Values longer than this are cut in messages. */
const SHOWN_VALUE = 120

export function encodePart(part: Part, at: PartContext): EncodedPart {
  let records: PartRecord[]
  try {
    records = readRecords(part)
  } catch (error) {
    // A CSV body that does not parse (an unterminated quote) cannot be cut into rows to refuse.
    if (hasCode(error, BAD_RECORD)) return { error: error as Error }
    throw error
  }
  if (records.length !== part.rows)
    return {
      error: new RowCountMismatchError({
        target: `table ${at.table}`,
        batch: at.batch,
        expected: part.rows,
        loaded: records.length,
      }),
    }
  const targets = targetColumns(part, at)
  if (targets instanceof Error) return { error: targets }
  const key = encodedString(at.key)
  // RowBinary is about as long as the text it comes from, plus the key on every row.
  const writer = new RowBinaryWriter(part.body.length + records.length * key.length)
  const refused: RefusedRow[] = []
  records.forEach((record, row) => {
    const problem = 'problem' in record ? record.problem : writeRow(writer, targets, record.cells)
    if (problem)
      refused.push({
        part: at.index,
        row,
        error: problem,
        code: 'cells' in record ? VALUE_REFUSED : RECORD_REFUSED,
      })
    writer.encoded(key)
  })
  const names = [...targets.map((t) => t.name), BATCH_COLUMN].map(quoteName)
  return {
    sql: `INSERT INTO ${at.table} (${names.join(', ')}) FORMAT RowBinary`,
    body: writer.bytes(),
    rows: records.length,
    refused,
  }
}

/** Writes the row's values; returns the first one its column cannot hold, as a one-line reason. */
function writeRow(
  writer: RowBinaryWriter,
  targets: readonly TargetColumn[],
  cells: readonly Cell[],
): string | undefined {
  let problem: string | undefined
  targets.forEach((target, i) => {
    const cell = cells[i] ?? null
    const reason = writer.value(target, cell)
    problem ??= reason && `column ${JSON.stringify(target.name)}: ${shown(cell)} ${reason}`
  })
  return problem
}

function targetColumns(part: Part, at: PartContext): TargetColumn[] | Error {
  const byName = new Map(at.columns.map((c) => [c.name, c]))
  const targets: TargetColumn[] = []
  for (const field of part.schema.fields) {
    const column = byName.get(field.name)
    if (column === undefined)
      return new StatementRejectedError(
        at.target,
        at.table,
        `the table has no column ${JSON.stringify(field.name)}`,
      )
    if (column.type === undefined) return new UnsupportedColumnError(at.table, column.name, column.spelled)
    targets.push({ name: column.name, type: column.type, nullable: column.nullable, field: field.type })
  }
  return targets
}

function shown(cell: Cell): string {
  if (cell === null) return 'NULL'
  const text = cell.length > SHOWN_VALUE ? `${cell.slice(0, SHOWN_VALUE)}…` : cell
  return JSON.stringify(text)
}
