/** How a refused value is named: its column, its text (cut when long) and why the column cannot hold it. */
import type { Cell } from './part-records.js'
import type { TargetColumn } from './row-binary.js'

/** Values longer than this are cut in messages. */
const SHOWN_VALUE = 120

export function valueProblem(target: TargetColumn, cell: Cell, reason: string): string {
  return `column ${JSON.stringify(target.name)}: ${shown(cell)} ${reason}`
}

function shown(cell: Cell): string {
  if (cell === null) return 'NULL'
  const text = cell.length > SHOWN_VALUE ? `${cell.slice(0, SHOWN_VALUE)}…` : cell
  return JSON.stringify(text)
}
