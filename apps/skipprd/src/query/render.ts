/**
 * How results look. `--plain` (and `df`): `{"header":[...],"rows":[[...]]}` on one line with every
 * value a string and NULL as "NULL", streamed chunk by chunk so a large result is never held whole.
 * Otherwise an aligned table, numbers right-aligned, with a row count. Documents print as JSON,
 * messages as a line.
 */
import type { Cell, StatementResult } from './result.js'

export type Write = (text: string) => void | Promise<void>

export const NULL_TEXT = 'NULL'

export async function render(result: StatementResult, plain: boolean, write: Write): Promise<void> {
  switch (result.kind) {
    case 'message':
      return write(`${result.text}\n`)
    case 'document':
      return write(`${plain ? JSON.stringify(result.value) : JSON.stringify(result.value, null, 2)}\n`)
    case 'rows':
      return plain ? renderPlain(result.header, result.chunks, write) : renderTable(result, write)
    case 'stream':
      return plain ? renderPlainStream(result, write) : renderTableStream(result, write)
  }
}

/** STREAM with `--plain`: each arrival of rows as its own `{"header":[...],"rows":[[...]]}` line. */
async function renderPlainStream(
  result: Extract<StatementResult, { kind: 'stream' }>,
  write: Write,
): Promise<void> {
  for await (const rows of result.chunks) {
    await renderPlain(
      result.header,
      (async function* () {
        yield rows
      })(),
      write,
    )
  }
}

/**
 * STREAM as a table: the header at once, then each row as it arrives, its values padded to the
 * header's widths (rows to come are unknown, so nothing wider can be planned for).
 */
async function renderTableStream(
  result: Extract<StatementResult, { kind: 'stream' }>,
  write: Write,
): Promise<void> {
  const widths = result.header.map(width)
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => pad(v, widths[i] ?? 0, false))
      .join(' | ')
      .trimEnd()
  await write(`${line(result.header)}\n${widths.map((w) => '-'.repeat(w)).join('-+-')}\n`)
  for await (const rows of result.chunks)
    await write(rows.map((row) => `${line(row.map(display))}\n`).join(''))
}

export async function renderPlain(
  header: readonly string[],
  chunks: AsyncIterable<Cell[][]>,
  write: Write,
): Promise<void> {
  await write(`{"header":${JSON.stringify(header)},"rows":[`)
  let first = true
  for await (const rows of chunks) {
    if (rows.length === 0) continue
    const text = rows.map((row) => JSON.stringify(row.map((v) => v ?? NULL_TEXT))).join(',')
    await write(first ? text : `,${text}`)
    first = false
  }
  await write(']}\n')
}

async function renderTable(result: Extract<StatementResult, { kind: 'rows' }>, write: Write): Promise<void> {
  const rows: string[][] = []
  for await (const chunk of result.chunks) for (const row of chunk) rows.push(row.map(display))
  const widths = columnWidths(result.header, rows)
  const line = (values: readonly string[], alignRight: (i: number) => boolean) =>
    values.map((v, i) => pad(v, widths[i] ?? 0, alignRight(i))).join(' | ')
  const out = [
    line(result.header, () => false),
    widths.map((w) => '-'.repeat(w)).join('-+-'),
    ...rows.map((row) => line(row, (i) => result.numeric[i] === true)),
    `(${rows.length} ${rows.length === 1 ? 'row' : 'rows'})`,
  ]
  await write(`${out.map((l) => l.trimEnd()).join('\n')}\n`)
}

/** Each column's widest value; a loop, since spreading a large result into Math.max overflows the stack. */
function columnWidths(header: readonly string[], rows: readonly string[][]): number[] {
  const widths = header.map(width)
  for (const row of rows)
    for (const [i, value] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, width(value))
  return widths
}

/** A value on one table line: line breaks and tabs are shown escaped. */
function display(value: Cell): string {
  if (value === null) return NULL_TEXT
  return value.replaceAll('\n', '\\n').replaceAll('\r', '\\r').replaceAll('\t', '\\t')
}

/** Display width: characters, not UTF-16 units. */
function width(text: string): number {
  return [...text].length
}

function pad(text: string, to: number, right: boolean): string {
  const fill = ' '.repeat(Math.max(0, to - width(text)))
  return right ? fill + text : text + fill
}
