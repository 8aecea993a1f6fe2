/**
 * The fake BigQuery's SQL: the GoogleSQL subset the Bigquery sink sends, rewritten into DuckDB SQL.
 * Backticked names become DuckDB identifiers (the project part is dropped: a dataset is a DuckDB
 * schema), `@name` parameters become literals, and the type and function names that differ are
 * renamed. Anything else is passed to DuckDB as it is.
 */

/** A query parameter as the REST API carries it (`queryParameters`). */
export interface QueryParameter {
  readonly name?: string
  readonly parameterType?: { readonly type?: string }
  readonly parameterValue?: { readonly value?: string | null }
}

const TYPE_NAMES: readonly [RegExp, string][] = [
  [/\bINT64\b/gi, 'BIGINT'],
  [/\bFLOAT64\b/gi, 'DOUBLE'],
  [/\bBOOL\b/gi, 'BOOLEAN'],
  [/\bSTRING\b/gi, 'VARCHAR'],
  [/\bTIMESTAMP\b/gi, 'TIMESTAMPTZ'],
  [/\bCURRENT_TIMESTAMP\(\)/gi, 'current_timestamp'],
  [/\bCOMMIT TRANSACTION\b/gi, 'COMMIT'],
]

/** Splits a script into statements at `;` outside quotes and backticks. */
export function splitStatements(sql: string): string[] {
  const out: string[] = []
  let start = 0
  let quote: string | undefined
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i] as string
    if (quote) {
      if (c === '\\') i++
      else if (c === quote) quote = undefined
    } else if (c === "'" || c === '"' || c === '`') quote = c
    else if (c === ';') {
      out.push(sql.slice(start, i))
      start = i + 1
    }
  }
  out.push(sql.slice(start))
  return out.map((s) => s.trim()).filter((s) => s.length > 0)
}

/** One GoogleSQL statement as DuckDB SQL. */
export function toDuckdb(statement: string, project: string, params: readonly QueryParameter[]): string {
  const values = new Map(params.map((p) => [p.name ?? '', p]))
  let out = ''
  for (let i = 0; i < statement.length; i++) {
    const c = statement[i] as string
    if (c === '`' || c === "'") {
      const { text, end } = readQuoted(statement, i, c)
      i = end
      if (c === "'") out += duckLiteral(text)
      else if (text === project && statement[i + 1] === '.') i++
      else out += `"${text.replaceAll('"', '""')}"`
    } else if (c === '@' && /[A-Za-z_]/.test(statement[i + 1] ?? '')) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(statement.slice(i + 1))?.[0] ?? ''
      const param = values.get(name)
      if (!param) throw new SqlError(`Query parameter '${name}' not found`)
      out += paramLiteral(param)
      i += name.length
    } else {
      // Keywords only ever appear outside quotes: rename them in this unquoted stretch.
      let j = i
      while (j < statement.length && !"`'@".includes(statement[j] as string)) j++
      if (j === i) j = i + 1
      out += renameTypes(statement.slice(i, j))
      i = j - 1
    }
  }
  return out
}

export class SqlError extends Error {}

function renameTypes(text: string): string {
  return TYPE_NAMES.reduce((s, [pattern, name]) => s.replace(pattern, name), text)
}

/** A GoogleSQL quoted token (backslash escapes) from `at`: its text and the index of its closing quote. */
function readQuoted(sql: string, at: number, quote: string): { text: string; end: number } {
  let text = ''
  for (let i = at + 1; i < sql.length; i++) {
    const c = sql[i] as string
    if (c === '\\') {
      const next = sql[++i] ?? ''
      text += next === 'n' ? '\n' : next === 't' ? '\t' : next === 'r' ? '\r' : next
    } else if (c === quote) return { text, end: i }
    else text += c
  }
  throw new SqlError(`Syntax error: Unclosed ${quote === '`' ? 'identifier' : 'string'} literal`)
}

function duckLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`
}

function paramLiteral(param: QueryParameter): string {
  const value = param.parameterValue?.value
  if (value === null || value === undefined) return 'NULL'
  const type = param.parameterType?.type ?? 'STRING'
  if (type === 'INT64' || type === 'FLOAT64' || type === 'NUMERIC') {
    if (!/^-?[0-9.eE+]+$/.test(value)) throw new SqlError(`Invalid ${type} parameter value: ${value}`)
    return `CAST(${value} AS ${type === 'INT64' ? 'BIGINT' : 'DOUBLE'})`
  }
  if (type === 'BOOL') return value === 'true' ? 'true' : 'false'
  return duckLiteral(value)
}
