/**
 * A refused row's reason as the runner's deadletter keeps it (connector-api's sink.ts `RefusedRow`):
 * one line naming the table, the column when it is known, and the server's message, which names
 * the value (`invalid input syntax for type integer: "x"`) or the constraint, with its DETAIL
 * (`Failing row contains …`, `Key (id)=(3) already exists.`). The code is the SQLSTATE.
 */
import type { RefusedRow } from '@skippr/connector-api'
import { sqlStateOf } from './errors.js'

/** The code of a refusal that came without a SQLSTATE (never expected from the server). */
const UNKNOWN_STATE = 'XX000'

export function refusedRow(
  part: number,
  row: number,
  table: string,
  error: unknown,
  column = columnOf(error),
): RefusedRow {
  const { message, detail } = error as { message?: unknown; detail?: unknown }
  const reason = [String(message ?? error), typeof detail === 'string' ? `(${detail})` : '']
    .filter(Boolean)
    .join(' ')
  const at = column === undefined ? table : `${table}, column ${column}`
  return { part, row, error: oneLine(`${at}: ${reason}`), code: sqlStateOf(error) ?? UNKNOWN_STATE }
}

/**
 * The column the server names: its `column` field (NOT NULL), else the COPY CONTEXT's
 * `…, column qty: "lots"` (a value that does not convert), as PostgreSQL writes it in English.
 */
function columnOf(error: unknown): string | undefined {
  const { column, where } = error as { column?: unknown; where?: unknown }
  if (typeof column === 'string') return column
  if (typeof where !== 'string') return undefined
  return where.match(/^COPY .*?, line \d+, column (.*?): /m)?.[1]
}

/** Newlines in a value the message quotes would break the line: written as escapes. */
function oneLine(text: string): string {
  return text.replace(/\r/g, '\\r').replace(/\n/g, '\\n')
}
