/**
 * What the user typed: statements split at `;` (outside quotes and comments), and the admin
 * statements skipprd answers itself. Everything else is SQL for DuckDB.
 *
 *   ENABLE PIPELINE p | DISABLE PIPELINE p | RESET PIPELINE p | DROP PIPELINE p
 *   SHOW PIPELINE p   | SHOW STATS FOR p | SHOW STATS FOR p.ns
 *   DEADLETTER BATCH <seq> IN PIPELINE p  | DISCARD BATCH <seq> IN PIPELINE p
 *   SCHEMA DUMP p[.ns] TO '<path>'        | LOAD SCHEMA '<path>' INTO p[.ns]
 *   ALTER TABLE p.ns DROP COLUMN c | ALTER COLUMN c TYPE <type> | RENAME COLUMN a TO b
 *                    | MERGE COLUMN a INTO b
 *
 * STREAM (stream.ts) and SHOW DOCS (statement-docs.ts, which documents them all) are answered by
 * the session itself.
 *
 * Keywords are case-insensitive; a name is a bare word (letters, digits, `_`, `-`) or a
 * double-quoted identifier (`""` inside it is a quote); a path is a '…' string (`''` inside it
 * is a quote); a type is one of the saved schemas' field types (`long`, `string`, …).
 */
import { FIELD_TYPES, type FieldType } from '@skippr/connector-api'
import type { SchemaChange } from '../schema/changes.js'
import { SchemaChangeRefusedError } from '../schema/errors.js'

export type AdminStatement =
  | { readonly kind: 'enable' | 'disable' | 'reset' | 'drop' | 'show'; readonly pipeline: string }
  | { readonly kind: 'stats'; readonly pipeline: string; readonly namespace: string | undefined }
  | { readonly kind: 'deadletter' | 'discard'; readonly pipeline: string; readonly seq: bigint }
  | {
      readonly kind: 'schema-dump' | 'schema-load'
      readonly pipeline: string
      readonly namespace: string | undefined
      readonly path: string
    }
  | {
      readonly kind: 'alter'
      readonly pipeline: string
      readonly namespace: string
      readonly change: Exclude<SchemaChange, { kind: 'replace' }>
    }

/** A name as the statements write it (the grammar above); `unquote` gives the name itself. */
export const NAME = '("(?:[^"]|"")+"|[A-Za-z0-9_-]+)'
const PIPELINE_STATEMENT = new RegExp(
  String.raw`^(ENABLE|DISABLE|RESET|DROP|SHOW)\s+PIPELINE\s+${NAME}$`,
  'i',
)
const STATS_STATEMENT = new RegExp(String.raw`^SHOW\s+STATS\s+FOR\s+${NAME}(?:\.${NAME})?$`, 'i')
const BATCH_STATEMENT = new RegExp(
  String.raw`^(DEADLETTER|DISCARD)\s+BATCH\s+(\d+)\s+IN\s+PIPELINE\s+${NAME}$`,
  'i',
)

const PATH = "'((?:[^']|'')*)'"
const TABLE = String.raw`${NAME}(?:\.${NAME})?`
const DUMP_STATEMENT = new RegExp(String.raw`^SCHEMA\s+DUMP\s+${TABLE}\s+TO\s+${PATH}$`, 'i')
const LOAD_STATEMENT = new RegExp(String.raw`^LOAD\s+SCHEMA\s+${PATH}\s+INTO\s+${TABLE}$`, 'i')
const ALTER_STATEMENT = new RegExp(String.raw`^ALTER\s+TABLE\s+${NAME}\.${NAME}\s+(.*)$`, 'is')
const ALTER_ACTIONS: readonly [RegExp, (m: RegExpExecArray, namespace: string) => AlterChange][] = [
  [
    new RegExp(String.raw`^DROP\s+COLUMN\s+${NAME}$`, 'i'),
    (m) => ({ kind: 'drop', column: unquote(m[1] as string) }),
  ],
  [
    new RegExp(String.raw`^ALTER\s+COLUMN\s+${NAME}\s+(?:SET\s+DATA\s+)?TYPE\s+([A-Za-z]+)$`, 'i'),
    (m, namespace) => ({
      kind: 'type',
      column: unquote(m[1] as string),
      type: fieldType(m[2] as string, namespace),
    }),
  ],
  [
    new RegExp(String.raw`^RENAME\s+COLUMN\s+${NAME}\s+TO\s+${NAME}$`, 'i'),
    (m) => ({ kind: 'rename', column: unquote(m[1] as string), to: unquote(m[2] as string) }),
  ],
  [
    new RegExp(String.raw`^MERGE\s+COLUMN\s+${NAME}\s+INTO\s+${NAME}$`, 'i'),
    (m) => ({ kind: 'merge', column: unquote(m[1] as string), into: unquote(m[2] as string) }),
  ],
]
type AlterChange = Exclude<SchemaChange, { kind: 'replace' }>

/** The admin statement `text` is (without its `;`), or undefined for SQL. */
export function parseAdminStatement(text: string): AdminStatement | undefined {
  const statement = stripComments(text).trim()
  const pipeline = PIPELINE_STATEMENT.exec(statement)
  if (pipeline) {
    const kind = (pipeline[1] as string).toLowerCase() as 'enable' | 'disable' | 'reset' | 'drop' | 'show'
    return { kind, pipeline: unquote(pipeline[2] as string) }
  }
  const batch = BATCH_STATEMENT.exec(statement)
  if (batch) {
    const kind = (batch[1] as string).toLowerCase() as 'deadletter' | 'discard'
    return { kind, pipeline: unquote(batch[3] as string), seq: BigInt(batch[2] as string) }
  }
  const stats = STATS_STATEMENT.exec(statement)
  if (stats) {
    const namespace = stats[2]
    return {
      kind: 'stats',
      pipeline: unquote(stats[1] as string),
      namespace: namespace && unquote(namespace),
    }
  }
  return parseSchemaStatement(statement)
}

function parseSchemaStatement(statement: string): AdminStatement | undefined {
  const dump = DUMP_STATEMENT.exec(statement)
  if (dump) return schemaFile('schema-dump', dump[1], dump[2], dump[3])
  const load = LOAD_STATEMENT.exec(statement)
  if (load) return schemaFile('schema-load', load[2], load[3], load[1])
  const alter = ALTER_STATEMENT.exec(statement)
  if (!alter) return undefined
  const action = (alter[3] as string).trim()
  for (const [pattern, change] of ALTER_ACTIONS) {
    const m = pattern.exec(action)
    const namespace = unquote(alter[2] as string)
    if (m)
      return { kind: 'alter', pipeline: unquote(alter[1] as string), namespace, change: change(m, namespace) }
  }
  // ALTER TABLE of another form is DuckDB's to answer (or refuse).
  return undefined
}

function schemaFile(
  kind: 'schema-dump' | 'schema-load',
  pipeline: string | undefined,
  namespace: string | undefined,
  path: string | undefined,
): AdminStatement {
  return {
    kind,
    pipeline: unquote(pipeline as string),
    namespace: namespace && unquote(namespace),
    path: (path as string).replaceAll("''", "'"),
  }
}

function fieldType(name: string, namespace: string): FieldType {
  const type = name.toLowerCase()
  if ((FIELD_TYPES as readonly string[]).includes(type)) return type as FieldType
  throw new SchemaChangeRefusedError(
    namespace,
    `'${name}' is not a field type (use one of ${FIELD_TYPES.join(', ')})`,
  )
}

/** How an admin statement is written back, for messages: `RESET PIPELINE bikehire`. */
export function describeAdmin(statement: AdminStatement): string {
  if (statement.kind === 'stats') {
    return `SHOW STATS FOR ${statement.pipeline}${statement.namespace === undefined ? '' : `.${statement.namespace}`}`
  }
  const table = `${statement.pipeline}${'namespace' in statement && statement.namespace !== undefined ? `.${statement.namespace}` : ''}`
  if (statement.kind === 'schema-dump') return `SCHEMA DUMP ${table} TO '${statement.path}'`
  if (statement.kind === 'schema-load') return `LOAD SCHEMA '${statement.path}' INTO ${table}`
  if (statement.kind === 'alter') return `ALTER TABLE ${table} ${describeChange(statement.change)}`
  if (statement.kind === 'deadletter' || statement.kind === 'discard')
    return `${statement.kind.toUpperCase()} BATCH ${statement.seq} IN PIPELINE ${statement.pipeline}`
  return `${statement.kind.toUpperCase()} PIPELINE ${statement.pipeline}`
}

function describeChange(change: AlterChange): string {
  switch (change.kind) {
    case 'drop':
      return `DROP COLUMN ${change.column}`
    case 'type':
      return `ALTER COLUMN ${change.column} TYPE ${change.type}`
    case 'rename':
      return `RENAME COLUMN ${change.column} TO ${change.to}`
    case 'merge':
      return `MERGE COLUMN ${change.column} INTO ${change.into}`
  }
}

export function unquote(name: string): string {
  return name.startsWith('"') ? name.slice(1, -1).replaceAll('""', '"') : name
}

export interface SplitStatements {
  /** Statements that ended with `;`, without it, blank ones dropped. */
  readonly complete: string[]
  /** Text after the last `;`: an unfinished statement, or only whitespace and comments. */
  readonly rest: string
}

/** Splits at `;` outside '…' and "…" quotes, `--` line comments and block comments. */
export function splitStatements(text: string): SplitStatements {
  const complete: string[] = []
  let start = 0
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (c === "'" || c === '"') i = closingQuote(text, i, c)
    else if (c === '-' && text[i + 1] === '-') i = lineEnd(text, i)
    else if (c === '/' && text[i + 1] === '*') i = blockEnd(text, i)
    else if (c === ';') {
      const statement = text.slice(start, i)
      if (!isBlank(statement)) complete.push(statement.trim())
      start = i + 1
      i++
    } else i++
  }
  return { complete, rest: text.slice(start) }
}

/** True when `text` holds nothing but whitespace and comments. */
export function isBlank(text: string): boolean {
  return stripComments(text).trim() === ''
}

/** `text` without its `--` line comments and block comments (quoted text kept). */
export function stripComments(text: string): string {
  let out = ''
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (c === "'" || c === '"') {
      const end = closingQuote(text, i, c)
      out += text.slice(i, end)
      i = end
    } else if (c === '-' && text[i + 1] === '-') {
      i = lineEnd(text, i)
      out += ' '
    } else if (c === '/' && text[i + 1] === '*') {
      i = blockEnd(text, i)
      out += ' '
    } else {
      out += c
      i++
    }
  }
  return out
}

/** Index after the quote closing the one at `at` (a doubled quote is part of the text). */
function closingQuote(text: string, at: number, quote: string): number {
  let i = at + 1
  for (;;) {
    const next = text.indexOf(quote, i)
    if (next === -1) return text.length
    if (text[next + 1] !== quote) return next + 1
    i = next + 2
  }
}

function lineEnd(text: string, at: number): number {
  const end = text.indexOf('\n', at)
  return end === -1 ? text.length : end
}

function blockEnd(text: string, at: number): number {
  const end = text.indexOf('*/', at + 2)
  return end === -1 ? text.length : end + 2
}
