/**
 * Reading the contract's record formats (connector-api's batch.ts) with DuckDB's own readers, as the
 * sink lands them: skipprd query reads WAL batches the same way, so that it shows each value as it
 * would land.
 */
import type { Field, RecordFormat } from '@skippr/connector-api'
import { columnsStruct, csvReadType, fromCsvText, ident, literal } from './sql.js'

/**
 * read_csv drops one byte-order mark at the start of a file, even when it is a value's first
 * character (`\uFEFFbom` would land as `bom`, a lone `\uFEFF` as NULL). A CSV body starting with one
 * is written after another, which read_csv drops instead; other bodies are written as they are.
 */
const BOM = Uint8Array.of(0xef, 0xbb, 0xbf)

/** The bytes of a load file that `readRecords` reads back as `body`, in order. */
export function loadFileChunks(format: RecordFormat, body: Uint8Array): Uint8Array[] {
  const bom = body[0] === BOM[0] && body[1] === BOM[1] && body[2] === BOM[2]
  return format === 'csv' && bom ? [BOM, body] : [body]
}

/**
 * The `FROM` clause that reads `files` of one `format` as `fields`, and the expressions that
 * select each field from it, in order. `options` adds reader options (`filename = 'f'`). `raw` names
 * each field's column as the reader gives it, before `columns` casts it (for the refused-row search).
 */
export function readRecords(
  format: RecordFormat,
  files: readonly string[],
  fields: readonly Field[],
  options?: string,
): { columns: string[]; raw: string[]; from: string } {
  const list = `[${files.map(literal).join(', ')}]`
  const extra = options ? `, ${options}` : ''
  if (format === 'csv') {
    // CSV columns are positional: read them under neutral names so any field name is safe.
    const positional = fields.map((f, i) => ({ name: `c${i}`, type: csvReadType(f.type) }))
    return {
      columns: fields.map((f, i) => fromCsvText(`c${i}`, f)),
      raw: positional.map((c) => c.name),
      from:
        `read_csv(${list}, columns = ${columnsStruct(positional)}, header = false, auto_detect = false, ` +
        // The contract's records end in LF alone: told so, read_csv keeps a CR inside a quoted field
        // (left to detect the line end, it may take that CR for one and refuse the field).
        `delim = ',', quote = '"', escape = '"', new_line = '\\n', allow_quoted_nulls = false${extra})`,
    }
  }
  const columns = fields.map((f) => ident(f.name))
  return {
    columns,
    raw: columns,
    from: `read_json(${list}, format = 'newline_delimited', records = true, columns = ${columnsStruct(fields)}${extra})`,
  }
}
