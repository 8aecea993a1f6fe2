/**
 * The fake Snowflake's SQL: the subset the Snowflake sink sends, recognised or rewritten into DuckDB
 * SQL. PUT, COPY INTO and REMOVE are parsed into commands the server runs itself; every other
 * statement has its type names renamed and goes to DuckDB (a Snowflake database is an attached
 * DuckDB catalog, so `DB.SCHEMA.TABLE` resolves as it is).
 */

const TYPE_NAMES: readonly [RegExp, string][] = [
  [/\bNUMBER\s*\(/gi, 'DECIMAL('],
  [/\bFLOAT\b/gi, 'DOUBLE'],
  [/\bTIMESTAMP_TZ\b/gi, 'TIMESTAMPTZ'],
  [/\bVARIANT\b/gi, 'JSON'],
  [/\bCURRENT_TIMESTAMP\(\)/gi, 'current_timestamp'],
  [/\bBEGIN TRANSACTION\b/gi, 'BEGIN'],
  [/\bCOPY GRANTS\b/gi, ''],
]

/** Snowflake's names for DuckDB's column types, as DESCRIBE TABLE shows them. */
export function snowflakeType(duckType: string): string {
  const decimal = /^DECIMAL\((\d+),(\d+)\)$/.exec(duckType)
  if (decimal) return `NUMBER(${decimal[1]},${decimal[2]})`
  const names: Record<string, string> = {
    VARCHAR: 'VARCHAR(16777216)',
    DOUBLE: 'FLOAT',
    BOOLEAN: 'BOOLEAN',
    DATE: 'DATE',
    'TIMESTAMP WITH TIME ZONE': 'TIMESTAMP_TZ(9)',
    JSON: 'VARIANT',
    BIGINT: 'NUMBER(38,0)',
    INTEGER: 'NUMBER(38,0)',
    BLOB: 'BINARY(8388608)',
  }
  return names[duckType] ?? duckType
}

/** A stage reference (`@~`, `@%"t"`, `@db.schema.name`) and the path after it. */
export interface StagePath {
  readonly stage: string
  readonly path: string
}

export type Command =
  | { readonly kind: 'put'; readonly file: string; readonly target: StagePath }
  | { readonly kind: 'remove'; readonly target: StagePath }
  | {
      readonly kind: 'copy'
      readonly table: string
      readonly columns: readonly string[] | undefined
      readonly source: StagePath
      readonly format: 'CSV' | 'JSON'
      readonly validate: boolean
      /** PURGE = TRUE: the file is removed once loaded. */
      readonly purge: boolean
    }
  | { readonly kind: 'describe'; readonly table: string }
  | { readonly kind: 'current-warehouse' }
  | { readonly kind: 'alter-session' }
  | { readonly kind: 'begin'; readonly name: string | undefined }
  | { readonly kind: 'show-transactions' }
  | { readonly kind: 'current-session' }
  | { readonly kind: 'abort'; readonly what: 'TRANSACTION' | 'SESSION'; readonly id: string }
  | { readonly kind: 'sql'; readonly sql: string }

export class SqlError extends Error {
  constructor(
    readonly code: string,
    readonly sqlState: string,
    message: string,
  ) {
    super(message)
  }
}

/** A quoted identifier or a bare name (`"a""b"`, `name`). */
const NAME = '(?:"(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*)'
const QUALIFIED = String.raw`${NAME}(?:\.${NAME}){0,2}`
const STAGE = String.raw`@(?:~|(?:${NAME}\.){0,2}%?${NAME}|%${NAME})`

/** A stage location, bare or as a single-quoted string (backslash escapes). */
const LOCATION = String.raw`'(?:[^'\\]|\\.)*'|\S+`

function stagePath(location: string): StagePath {
  const text = location.startsWith("'") ? location.slice(1, -1).replace(/\\(.)/g, '$1') : location
  const m = new RegExp(`^(${STAGE})(/.*)?$`, 's').exec(text.trim())
  if (!m) throw new SqlError('001003', '42000', `SQL compilation error: invalid stage location ${text}`)
  return { stage: m[1] as string, path: (m[2] ?? '/').replace(/^\/+/, '') }
}

/** The statement as a command the server runs. */
export function parseStatement(sqlText: string): Command {
  const sql = sqlText.trim().replace(/;\s*$/, '')
  let m = new RegExp(String.raw`^PUT\s+'file://((?:[^'\\]|\\.)+)'\s+(${LOCATION})`, 'is').exec(sql)
  if (m)
    return { kind: 'put', file: (m[1] as string).replace(/\\(.)/g, '$1'), target: stagePath(m[2] as string) }
  m = new RegExp(String.raw`^REMOVE\s+(${LOCATION})`, 'is').exec(sql)
  if (m) return { kind: 'remove', target: stagePath(m[1] as string) }
  m = new RegExp(
    String.raw`^COPY\s+INTO\s+(${QUALIFIED})\s*(\((?:[^()"]|"(?:[^"]|"")*")*\))?\s+FROM\s+(${LOCATION})\s+(.*)$`,
    'is',
  ).exec(sql)
  if (m) {
    const options = m[4] as string
    const type = /TYPE\s*=\s*'?(CSV|JSON)'?/i.exec(options)?.[1]?.toUpperCase()
    if (type !== 'CSV' && type !== 'JSON')
      throw new SqlError('002019', '42000', 'SQL compilation error: FILE_FORMAT TYPE must be CSV or JSON')
    const columns = m[2] ? splitNames(m[2].slice(1, -1)) : undefined
    if (!columns && !/MATCH_BY_COLUMN_NAME\s*=\s*CASE_INSENSITIVE/i.test(options))
      throw new SqlError('002019', '42000', 'the fake copies by a column list or MATCH_BY_COLUMN_NAME only')
    return {
      kind: 'copy',
      table: m[1] as string,
      columns,
      source: stagePath(m[3] as string),
      format: type,
      validate: /VALIDATION_MODE\s*=\s*RETURN_ALL_ERRORS/i.test(options),
      purge: /PURGE\s*=\s*TRUE/i.test(options),
    }
  }
  m = new RegExp(String.raw`^DESC(?:RIBE)?\s+TABLE\s+(${QUALIFIED})$`, 'is').exec(sql)
  if (m) return { kind: 'describe', table: m[1] as string }
  if (/^SELECT\s+CURRENT_WAREHOUSE\(\)/i.test(sql)) return { kind: 'current-warehouse' }
  if (/^ALTER\s+SESSION\b/i.test(sql)) return { kind: 'alter-session' }
  m = new RegExp(String.raw`^BEGIN(?:\s+(?:WORK|TRANSACTION))?(?:\s+NAME\s+(${NAME}))?$`, 'is').exec(sql)
  if (m) return { kind: 'begin', name: m[1] === undefined ? undefined : unquote(m[1]) }
  if (/^SHOW\s+TRANSACTIONS$/i.test(sql)) return { kind: 'show-transactions' }
  if (/^SELECT\s+CURRENT_SESSION\(\)$/i.test(sql)) return { kind: 'current-session' }
  m = /^SELECT\s+SYSTEM\$ABORT_(TRANSACTION|SESSION)\(\s*(\d+)\s*\)$/i.exec(sql)
  if (m)
    return {
      kind: 'abort',
      what: (m[1] as string).toUpperCase() as 'TRANSACTION' | 'SESSION',
      id: m[2] as string,
    }
  return { kind: 'sql', sql: renameTypes(sql) }
}

/** Type names renamed outside quotes. */
function renameTypes(sql: string): string {
  return sql
    .split(/('(?:[^']|'')*'|"(?:[^"]|"")*")/)
    .map((piece, i) => (i % 2 === 1 ? piece : TYPE_NAMES.reduce((s, [p, n]) => s.replace(p, n), piece)))
    .join('')
}

/** `"a", b` → the names, unquoted (a bare name upper-cased, as Snowflake resolves it). */
export function splitNames(list: string): string[] {
  return [...list.matchAll(new RegExp(NAME, 'g'))].map((m) => unquote(m[0]))
}

export function unquote(name: string): string {
  return name.startsWith('"') ? name.slice(1, -1).replaceAll('""', '"') : name.toUpperCase()
}

/** A bind value as the query-request carries it (`bindings`: position → type and text). */
export interface Binding {
  readonly type?: string
  readonly value?: string | null
}

/** `sql` with each `?` outside quotes replaced by its binding as a literal. */
export function bindValues(sql: string, bindings: Record<string, Binding> | undefined): string {
  if (!bindings) return sql
  let n = 0
  return sql
    .split(/('(?:[^'\\]|\\.)*'|"(?:[^"]|"")*")/)
    .map((piece, i) =>
      i % 2 === 1
        ? piece
        : piece.replace(/\?/g, () => {
            const bind = bindings[String(++n)]
            if (!bind)
              throw new SqlError('002049', '42601', `SQL compilation error: bind variable ${n} not set`)
            if (bind.value === null || bind.value === undefined) return 'NULL'
            if (bind.type === 'FIXED' || bind.type === 'REAL') return String(Number(bind.value))
            return `'${bind.value.replaceAll("'", "''")}'`
          }),
    )
    .join('')
}
