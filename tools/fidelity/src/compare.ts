/**
 * Landed rows against the source's, value by value (rules in canonical.ts): every source row
 * lands once, none is added, every column is there, and every value is the source's. Rows are
 * matched by `id` where the table has one, else as a multiset of whole rows.
 */
import { landedCanonical } from './canonical.js'
import type { LandedColumn, LandedTable } from './sinks.js'
import { expectedIn, type SourceCell, type SourceRows, sourceText } from './source-cells.js'
import { ID } from './table.js'

const MAX_PROBLEMS = 25

const show = (text: string | null | undefined) => {
  if (text === null) return 'NULL'
  if (text === undefined) return '(no exact form in this type)'
  const json = JSON.stringify(text)
  return json.length > 80 ? `${json.slice(0, 77)}…" (${text.length} chars)` : json
}

export interface CompareOptions {
  /** csv-spectrum's expected JSON has no NULL: its `""` stands for an empty field, quoted or not. */
  readonly emptyIsNull?: boolean
}

function cellProblem(
  column: LandedColumn,
  cell: SourceCell,
  landed: string | null,
  options: CompareOptions,
): string | undefined {
  if (options.emptyIsNull && cell !== null && 'text' in cell && cell.text === '' && landed === null)
    return undefined
  if (cell === null) return landed === null ? undefined : `source NULL, landed ${show(landed)}`
  const source = sourceText(cell)
  if (landed === null) return `source ${show(source)}, landed NULL`
  const expected = expectedIn(column.type, cell)
  const actual = landedCanonical(column.type, landed)
  if (expected === actual) return undefined
  const read = expected === source ? '' : ` (as ${column.type}: ${show(expected)})`
  return `source ${show(source)}${read}, landed ${show(actual)}`
}

export function compareRows(
  source: SourceRows,
  landed: LandedTable | undefined,
  options: CompareOptions = {},
): string[] {
  if (landed === undefined)
    return source.rows.length === 0 ? [] : [`no table landed; the source holds ${source.rows.length} rows`]
  const problems: string[] = []
  const landedIndex = new Map(landed.columns.map((c, k) => [c.name, k]))
  const pairs: { column: LandedColumn; sourceIndex: number; landedIndex: number }[] = []
  source.columns.forEach((c, sourceIndex) => {
    const k = landedIndex.get(c.name)
    if (k === undefined) problems.push(`column ${c.name} did not land`)
    else pairs.push({ column: landed.columns[k] as LandedColumn, sourceIndex, landedIndex: k })
  })
  const idPair = pairs.find((p) => p.column.name === ID)
  const compareRow = (
    label: string,
    sourceRow: readonly SourceCell[],
    landedRow: readonly (string | null)[],
  ) => {
    for (const p of pairs) {
      const problem = cellProblem(
        p.column,
        sourceRow[p.sourceIndex] ?? null,
        landedRow[p.landedIndex] ?? null,
        options,
      )
      if (problem) problems.push(`${label} column ${p.column.name} (${p.column.sqlType}): ${problem}`)
    }
  }
  if (idPair) {
    const bySourceId = new Map<string, readonly SourceCell[]>()
    for (const row of source.rows) {
      const cell = row[idPair.sourceIndex]
      if (cell) bySourceId.set(expectedIn(idPair.column.type, cell) ?? '', row)
    }
    const seen = new Set<string>()
    for (const row of landed.rows) {
      const id = landedCanonical(idPair.column.type, row[idPair.landedIndex] ?? '')
      const sourceRow = bySourceId.get(id)
      if (seen.has(id)) problems.push(`row id=${id} landed twice`)
      else if (!sourceRow) problems.push(`row id=${id} landed but the source has no such row`)
      else compareRow(`row id=${id}`, sourceRow, row)
      seen.add(id)
    }
    for (const id of bySourceId.keys()) if (!seen.has(id)) problems.push(`row id=${id} missing`)
  } else {
    problems.push(...compareMultisets(source, landed, pairs, options))
  }
  return problems.length > MAX_PROBLEMS
    ? [...problems.slice(0, MAX_PROBLEMS), `… and ${problems.length - MAX_PROBLEMS} more`]
    : problems
}

function compareMultisets(
  source: SourceRows,
  landed: LandedTable,
  pairs: readonly { column: LandedColumn; sourceIndex: number; landedIndex: number }[],
  options: CompareOptions,
): string[] {
  const signature = (values: readonly (string | null | undefined)[]) =>
    JSON.stringify(options.emptyIsNull ? values.map((v) => (v === '' ? null : v)) : values)
  const counts = new Map<string, number>()
  for (const row of source.rows) {
    const key = signature(
      pairs.map((p) => {
        const cell = row[p.sourceIndex] ?? null
        return cell === null ? null : (expectedIn(p.column.type, cell) ?? '(no exact form)')
      }),
    )
    counts.set(key, (counts.get(key) ?? 0) + 1)
  }
  const problems: string[] = []
  for (const row of landed.rows) {
    const key = signature(
      pairs.map((p) => {
        const text = row[p.landedIndex] ?? null
        return text === null ? null : landedCanonical(p.column.type, text)
      }),
    )
    const left = counts.get(key) ?? 0
    if (left === 0) problems.push(`landed row ${show(key)} is not in the source`)
    else counts.set(key, left - 1)
  }
  for (const [key, left] of counts) if (left > 0) problems.push(`source row ${show(key)} missing (${left}×)`)
  return problems
}
