import { encodeCsv, encodeJsonl, type Field } from '@skippr/connector-api'
import { bikehireRows, bikehireSchema } from '@skippr/source-sample'
const fields = bikehireSchema.fields
const rows = bikehireRows(42, 0, 65536) as unknown as Record<string, unknown>[]
function cell(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value)
  if (value instanceof Date) return value.toISOString()
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return `"${text.replaceAll('"', '""')}"`
}
const NUMERIC = new Set(['int', 'long', 'double'])
function compile(fields: readonly Field[]) {
  const reads = fields.map((f, i) => `const v${i} = row[${JSON.stringify(f.name)}];`).join(' ')
  const cells = fields.map((f, i) => NUMERIC.has(f.type) ? `(typeof v${i} === 'number' ? '' + v${i} : cell(v${i}))` : `(typeof v${i} === 'string' && v${i}.indexOf('"') === -1 ? '"' + v${i} + '"' : cell(v${i}))`)
  return new Function('cell', 'Buffer', `return (rows) => { let text = ''; for (let r = 0; r < rows.length; r++) { const row = rows[r]; ${reads} text += ${cells.join(" + ',' + ")} + '\\n' } return Buffer.from(text, 'utf8') }`)(cell, Buffer)
}
function compileChunked(fields: readonly Field[]) {
  const reads = fields.map((f, i) => `const v${i} = row[${JSON.stringify(f.name)}];`).join(' ')
  const cells = fields.map((f, i) => NUMERIC.has(f.type) ? `(typeof v${i} === 'number' ? '' + v${i} : cell(v${i}))` : `(typeof v${i} === 'string' && v${i}.indexOf('"') === -1 ? '"' + v${i} + '"' : cell(v${i}))`)
  return new Function('cell', 'Buffer', `return (rows) => { const out = Buffer.allocUnsafe(rows.length * 256); let at = 0; let text = ''; for (let r = 0; r < rows.length; r++) { const row = rows[r]; ${reads} text += ${cells.join(" + ',' + ")} + '\\n'; if (text.length > 8192) { at += out.latin1Write(text, at); text = '' } } at += out.latin1Write(text, at); return out.subarray(0, at) }`)(cell, Buffer)
}
function compileUtf8(fields: readonly Field[]) {
  const reads = fields.map((f, i) => `const v${i} = row[${JSON.stringify(f.name)}];`).join(' ')
  const cells = fields.map((f, i) => NUMERIC.has(f.type) ? `(typeof v${i} === 'number' ? '' + v${i} : cell(v${i}))` : `(typeof v${i} === 'string' && v${i}.indexOf('"') === -1 ? '"' + v${i} + '"' : cell(v${i}))`)
  return new Function('cell', 'Buffer', 'Sink', `return (rows) => { const sink = new Sink(); let text = ''; for (let r = 0; r < rows.length; r++) { const row = rows[r]; ${reads} text += ${cells.join(" + ',' + ")} + '\\n'; if (text.length > 8192) { sink.write(text); text = '' } } sink.write(text); return sink.take() }`)(cell, Buffer, Sink)
}
class Sink {
  buf = Buffer.allocUnsafe(1 << 20)
  at = 0
  write(text: string) {
    if (this.buf.length - this.at < text.length * 3) {
      const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + text.length * 3))
      this.buf.copy(bigger, 0, 0, this.at)
      this.buf = bigger
    }
    this.at += this.buf.utf8Write(text, this.at)
  }
  take() { return this.buf.subarray(0, this.at) }
}
function jsonlChunked(rows: readonly object[]) {
  const sink = new Sink(); let text = ''
  for (let r = 0; r < rows.length; r++) { text += JSON.stringify(rows[r]) + '\n'; if (text.length > 8192) { sink.write(text); text = '' } }
  sink.write(text); return sink.take()
}
const utf8 = compileUtf8(fields)
const typed = compile(fields)
const chunked = compileChunked(fields)
console.log('eq', Buffer.from(utf8(rows)).equals(Buffer.from(encodeCsv(rows, fields))), Buffer.from(jsonlChunked(rows)).equals(Buffer.from(encodeJsonl(rows))), Buffer.from(typed(rows)).equals(Buffer.from(encodeCsv(rows, fields))), Buffer.from(chunked(rows)).equals(Buffer.from(encodeCsv(rows, fields))))
const cases: Array<[string, () => number]> = [
  ['stringify', () => { let n = 0; for (const x of rows) n += JSON.stringify(x).length; return n }],
  ['stringify(array)', () => JSON.stringify(rows).length],
  ['encodeJsonl', () => encodeJsonl(rows).length],
  ['encodeCsv', () => encodeCsv(rows, fields).length],
  ['typed', () => typed(rows).length],
  ['chunked latin1', () => chunked(rows).length],
  ['chunked utf8', () => utf8(rows).length],
  ['jsonl chunked', () => jsonlChunked(rows).length],
]
const best: Record<string, number> = {}
for (let rep = 0; rep < 8; rep++) for (const [name, f] of cases) {
  const t = performance.now(); f(); const ms = performance.now() - t
  best[name] = Math.max(best[name] ?? 0, Math.round(rows.length / ms * 1000))
}
for (const [k, v] of Object.entries(best)) console.log(k.padEnd(20), v.toLocaleString())
