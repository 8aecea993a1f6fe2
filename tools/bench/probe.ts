import { encodeCsv, encodeJsonl, type Field } from '@skippr/connector-api'
import { bikehireRows, bikehireSchema } from '@skippr/source-sample'
const fields = bikehireSchema.fields
const rows = bikehireRows(42, 0, 65536)
function cell(value: unknown): string {
  if (typeof value === 'number') return `${value}`
  if (typeof value === 'string') return value.includes('"') ? `"${value.replaceAll('"', '""')}"` : `"${value}"`
  if (value === null || value === undefined) return ''
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value)
  if (value instanceof Date) return value.toISOString()
  return `"${JSON.stringify(value).replaceAll('"', '""')}"`
}
const NUMERIC = new Set(['int', 'long', 'double'])
function compile(fields: readonly Field[]) {
  const exprs = fields.map((f, i) => {
    const v = `v${i}`
    const read = `const ${v} = row[${JSON.stringify(f.name)}];`
    const fmt = NUMERIC.has(f.type)
      ? `(typeof ${v} === 'number' ? '' + ${v} : cell(${v}))`
      : `(typeof ${v} === 'string' && ${v}.indexOf('"') === -1 ? '"' + ${v} + '"' : cell(${v}))`
    return [read, fmt] as const
  })
  const body = `return (rows) => { let text = ''; for (let r = 0; r < rows.length; r++) { const row = rows[r]; ${exprs.map((e) => e[0]).join(' ')} text += ${exprs.map((e) => e[1]).join(" + ',' + ")} + '\\n' } return text }`
  return new Function('cell', body)(cell) as (rows: readonly object[]) => string
}
const typed = compile(fields)
const generic = (() => {
  const cells = fields.map((f) => `cell(row[${JSON.stringify(f.name)}])`)
  const line = new Function('cell', `return (row) => ${cells.join(" + ',' + ")} + '\\n'`)(cell)
  return (rs: any[]) => { let t = ''; for (const r of rs) t += line(r); return t }
})()
const same = Buffer.from(typed(rows)).equals(Buffer.from(encodeCsv(rows, fields)))
console.log('typed equals encodeCsv', same)
const cases: Array<[string, () => number]> = [
  ['stringify', () => { let n = 0; for (const x of rows) n += JSON.stringify(x).length; return n }],
  ['encodeJsonl', () => encodeJsonl(rows).length],
  ['encodeCsv', () => encodeCsv(rows, fields).length],
  ['generic compiled +Buffer.from', () => Buffer.from(generic(rows), 'utf8').length],
  ['typed compiled string only', () => typed(rows).length],
  ['typed compiled +Buffer.from', () => Buffer.from(typed(rows), 'utf8').length],
  ['typed compiled +latin1', () => Buffer.from(typed(rows), 'latin1').length],
]
for (let rep = 0; rep < 3; rep++) for (const [name, f] of cases) {
  const t = performance.now(); f(); const ms = performance.now() - t
  console.log(rep, name.padEnd(32), Math.round(rows.length / ms * 1000).toLocaleString())
}
