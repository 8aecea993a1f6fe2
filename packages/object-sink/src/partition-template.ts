/**
 * The `partition_by` template: Hive-style key levels between a namespace and a batch's objects,
 * from the batch's commit time as the WAL stored it and from row values, never from the clock of
 * the write, so a retry (on any host, days later) renders the same levels:
 *
 *   dt={commit_time:%Y-%m-%d}/hour={commit_time:%H}/country={field:country}
 *
 * Each `/`-separated level of the template is one key level, so every key of a template has the
 * same depth (values are escaped as one level each). Checked whole when the config is read.
 */

/** What Hive and Spark name the partition of a NULL or empty value. */
export const DEFAULT_PARTITION = '__HIVE_DEFAULT_PARTITION__'

/** A parsed template; `render` gives its key levels for a commit time and the values of `fields`. */
export interface PartitionTemplate {
  /** The template as written. */
  readonly template: string
  /** How many key levels it renders. */
  readonly depth: number
  /** The row fields it takes values of, each once, in order of first use. */
  readonly fields: readonly string[]
  /**
   * The key levels, joined by `/`: `committedAt` in ms since 1970 (a batch from an older WAL has
   * none: its time levels are the default partition), `values` by `fields`.
   */
  render(committedAt: number | undefined, values: readonly (string | null)[]): string
}

/** Why a template is refused: one line, naming the template's mistake. */
export class PartitionTemplateError extends Error {}

type Piece =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'commit_time'; readonly pattern: string }
  | { readonly kind: 'field'; readonly field: number }

/** Literal text: what Hive writes unescaped in a key level, and none of what Hive escapes. */
const LITERAL = /^[A-Za-z0-9_.=+~-]*$/
const PLACEHOLDER = /\{([^{}]*)\}/g
const TIME_FIELDS: Record<string, (date: Date) => string> = {
  Y: (d) => String(d.getUTCFullYear()).padStart(4, '0'),
  m: (d) => two(d.getUTCMonth() + 1),
  d: (d) => two(d.getUTCDate()),
  H: (d) => two(d.getUTCHours()),
  M: (d) => two(d.getUTCMinutes()),
  S: (d) => two(d.getUTCSeconds()),
  j: (d) => String(dayOfYear(d)).padStart(3, '0'),
  F: (d) => `${TIME_FIELDS.Y!(d)}-${TIME_FIELDS.m!(d)}-${TIME_FIELDS.d!(d)}`,
}
const TIME_DIRECTIVES = Object.keys(TIME_FIELDS)
  .map((c) => `%${c}`)
  .join(' ')

/** Parses and checks `template`; throws PartitionTemplateError with a line naming what is wrong. */
export function parsePartitionTemplate(template: string): PartitionTemplate {
  const fields: string[] = []
  const levels = template.split('/').map((level) => parseLevel(level, fields, template))
  return {
    template,
    depth: levels.length,
    fields,
    render: (committedAt, values) => {
      const date = committedAt === undefined ? undefined : new Date(committedAt)
      return levels
        .map((pieces) => pieces.map((piece) => renderPiece(piece, date, values)).join(''))
        .join('/')
    },
  }
}

/**
 * A value as one key level, as Hive escapes partition values: `%XX` for control characters, `/`
 * and what else Hive, Spark or a file system treat specially (`"#%'*:=?[\]^{}<>|`), and a leading
 * dot; NULL and the empty string are DEFAULT_PARTITION, as in Hive.
 */
export function partitionValue(value: string | null): string {
  if (value === null || value === '') return DEFAULT_PARTITION
  return value.replace(ESCAPED, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it matches
const ESCAPED = /[\u0000-\u001f\u007f"#%'*/:=?[\\\]^{}<>|]|^\./g

function parseLevel(level: string, fields: string[], template: string): Piece[] {
  const where = `partition_by ${JSON.stringify(template)}`
  if (level === '' || level === '.' || level === '..')
    throw new PartitionTemplateError(
      `${where}: ${level === '' ? 'an empty level (a leading, trailing or double /)' : `a ${level} level`}; ` +
        'write levels such as dt={commit_time:%Y-%m-%d}/country={field:country}',
    )
  const pieces: Piece[] = []
  let at = 0
  for (const match of level.matchAll(PLACEHOLDER)) {
    pieces.push(literal(level.slice(at, match.index), where))
    pieces.push(placeholder(match[1] as string, fields, where))
    at = match.index + match[0].length
  }
  pieces.push(literal(level.slice(at), where))
  return pieces.filter((piece) => piece.kind !== 'text' || piece.text !== '')
}

function literal(text: string, where: string): Piece {
  if (text.includes('{') || text.includes('}'))
    throw new PartitionTemplateError(`${where}: an unmatched { or } in ${JSON.stringify(text)}`)
  if (!LITERAL.test(text))
    throw new PartitionTemplateError(
      `${where}: ${JSON.stringify(text)} holds a character other than letters, digits and _ . = + ~ - ` +
        '(values from rows are escaped; text written in the template is not)',
    )
  return { kind: 'text', text }
}

function placeholder(body: string, fields: string[], where: string): Piece {
  const colon = body.indexOf(':')
  const name = colon === -1 ? body : body.slice(0, colon)
  const argument = colon === -1 ? '' : body.slice(colon + 1)
  if (name === 'commit_time') return { kind: 'commit_time', pattern: timePattern(argument, where) }
  if (name === 'field') {
    if (argument === '')
      throw new PartitionTemplateError(`${where}: {field:} names no field; write {field:<name>}`)
    if (!fields.includes(argument)) fields.push(argument)
    return { kind: 'field', field: fields.indexOf(argument) }
  }
  throw new PartitionTemplateError(
    `${where}: unknown placeholder {${body}}; use {commit_time:<pattern>} (the batch's commit time, UTC) ` +
      'or {field:<name>} (a row value)',
  )
}

function timePattern(pattern: string, where: string): string {
  if (pattern === '')
    throw new PartitionTemplateError(`${where}: {commit_time:} has no pattern; e.g. {commit_time:%Y-%m-%d}`)
  for (const [i, part] of pattern.split(/(%.?)/).entries()) {
    if (i % 2 === 1 && !(part.slice(1) in TIME_FIELDS))
      throw new PartitionTemplateError(
        `${where}: ${JSON.stringify(part)} in {commit_time:${pattern}} is not one of ${TIME_DIRECTIVES}`,
      )
    if (i % 2 === 0) literal(part, where)
  }
  return pattern
}

function renderPiece(piece: Piece, date: Date | undefined, values: readonly (string | null)[]): string {
  if (piece.kind === 'text') return piece.text
  if (piece.kind === 'field') return partitionValue(values[piece.field] ?? null)
  if (date === undefined) return DEFAULT_PARTITION
  return piece.pattern.replace(/%(.)/g, (_, c: string) => TIME_FIELDS[c]!(date))
}

function two(n: number): string {
  return String(n).padStart(2, '0')
}

function dayOfYear(d: Date): number {
  return Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1
}
