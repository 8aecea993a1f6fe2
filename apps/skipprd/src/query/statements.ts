/**
 * What the user typed: statements split at `;` (outside quotes and comments), and the admin
 * statements skipprd answers itself. Everything else is SQL for DuckDB.
 *
 *   ENABLE PIPELINE p | DISABLE PIPELINE p | RESET PIPELINE p | DROP PIPELINE p
 *   SHOW PIPELINE p   | SHOW STATS FOR p | SHOW STATS FOR p.ns
 *   DEADLETTER BATCH <seq> IN PIPELINE p  | DISCARD BATCH <seq> IN PIPELINE p
 *
 * Keywords are case-insensitive; a name is a bare word (letters, digits, `_`, `-`) or a
 * double-quoted identifier (`""` inside it is a quote).
 */

export type AdminStatement =
  | { readonly kind: 'enable' | 'disable' | 'reset' | 'drop' | 'show'; readonly pipeline: string }
  | { readonly kind: 'stats'; readonly pipeline: string; readonly namespace: string | undefined }
  | { readonly kind: 'deadletter' | 'discard'; readonly pipeline: string; readonly seq: bigint }

const NAME = '("(?:[^"]|"")+"|[A-Za-z0-9_-]+)'
const PIPELINE_STATEMENT = new RegExp(
  String.raw`^(ENABLE|DISABLE|RESET|DROP|SHOW)\s+PIPELINE\s+${NAME}$`,
  'i',
)
const STATS_STATEMENT = new RegExp(String.raw`^SHOW\s+STATS\s+FOR\s+${NAME}(?:\.${NAME})?$`, 'i')
const BATCH_STATEMENT = new RegExp(
  String.raw`^(DEADLETTER|DISCARD)\s+BATCH\s+(\d+)\s+IN\s+PIPELINE\s+${NAME}$`,
  'i',
)

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
  return undefined
}

/** How an admin statement is written back, for messages: `RESET PIPELINE bikehire`. */
export function describeAdmin(statement: AdminStatement): string {
  if (statement.kind === 'stats') {
    return `SHOW STATS FOR ${statement.pipeline}${statement.namespace === undefined ? '' : `.${statement.namespace}`}`
  }
  if (statement.kind === 'deadletter' || statement.kind === 'discard')
    return `${statement.kind.toUpperCase()} BATCH ${statement.seq} IN PIPELINE ${statement.pipeline}`
  return `${statement.kind.toUpperCase()} PIPELINE ${statement.pipeline}`
}

function unquote(name: string): string {
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

function stripComments(text: string): string {
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
