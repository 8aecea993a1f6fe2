/**
 * A part as the one RowBinary insert that lands it, checked whole before anything is sent: its
 * records counted against the rows it declares, every value against its column. Each row carries
 * the part's key in `_skippr_batch`, so the same part always encodes to the same bytes: the same
 * block, which a ReplicatedMergeTree recognises when a retry inserts it again.
 */
import type { RefusedRow } from '@skippr/connector-api'
import { BAD_RECORD, BATCH_COLUMN, hasCode, RowCountMismatchError } from '@skippr/connector-api'
import type { Column } from './column-types.js'
import { encodeCsvBody } from './csv-body.js'
import { type EncodedRows, partWriter } from './encoded-rows.js'
import { RECORD_REFUSED, StatementRejectedError, UnsupportedColumnError, VALUE_REFUSED } from './errors.js'
import { encodeJsonBody } from './json-body.js'
import { type Cell, type Part, type PartRecord, readRecords } from './part-records.js'
import { encodedString, type RowBinaryWriter, type TargetColumn } from './row-binary.js'
import { quoteName } from './sql.js'
import { valueProblem } from './value-problem.js'

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

export function encodePart(part: Part, at: PartContext): EncodedPart {
  const targets = targetColumns(part, at)
  const key = encodedString(at.key)
  const encoded =
    (targets instanceof Error ? undefined : fromBytes(part, targets, key)) ??
    encodeRecords(part, at, targets, key)
  if ('error' in encoded) return encoded
  if (encoded.rows !== part.rows) return { error: countMismatch(part, at, encoded.rows) }
  // Both paths return `targets` when it is an error, so here it is the columns.
  const names = [...(targets as TargetColumn[]).map((t) => t.name), BATCH_COLUMN].map(quoteName)
  return {
    sql: `INSERT INTO ${at.table} (${names.join(', ')}) FORMAT RowBinary`,
    body: encoded.body,
    rows: encoded.rows,
    refused: encoded.refused.map((row) => ({ part: at.index, ...row })),
  }
}

/** The usual path: the rows encoded from the body's bytes; undefined for what only the general path reports. */
function fromBytes(part: Part, targets: readonly TargetColumn[], key: Uint8Array): EncodedRows | undefined {
  return part.format === 'csv' ? encodeCsvBody(part, targets, key) : encodeJsonBody(part, targets, key)
}

/** The general path: the part read as records of strings (part-records.ts), then each value encoded. */
function encodeRecords(
  part: Part,
  at: PartContext,
  targets: TargetColumn[] | Error,
  key: Uint8Array,
): EncodedRows | { readonly error: Error } {
  let records: PartRecord[]
  try {
    records = readRecords(part)
  } catch (error) {
    // A CSV body that does not parse (an unterminated quote) cannot be cut into rows to refuse.
    if (hasCode(error, BAD_RECORD)) return { error: error as Error }
    throw error
  }
  if (records.length !== part.rows) return { error: countMismatch(part, at, records.length) }
  if (targets instanceof Error) return { error: targets }
  const writer = partWriter(part, key)
  const refused: EncodedRows['refused'][number][] = []
  records.forEach((record, row) => {
    const problem = 'problem' in record ? record.problem : writeRow(writer, targets, record.cells)
    if (problem)
      refused.push({ row, error: problem, code: 'cells' in record ? VALUE_REFUSED : RECORD_REFUSED })
    writer.encoded(key)
  })
  return { body: writer.bytes(), rows: records.length, refused }
}

function countMismatch(part: Part, at: PartContext, loaded: number): Error {
  return new RowCountMismatchError({
    target: `table ${at.table}`,
    batch: at.batch,
    expected: part.rows,
    loaded,
  })
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
    problem ??= reason && valueProblem(target, cell, reason)
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
