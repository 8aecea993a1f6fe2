/**
 * The routing key template: literal text with `{namespace}` and `{column:<name>}` placeholders,
 * parsed once from the config and rendered for every message.
 */
import { RoutingKeyError } from './errors.js'

type Piece = { readonly text: string } | { readonly namespace: true } | { readonly column: string }

/** AMQP carries a routing key as a short string: at most 255 bytes. */
const MAX_KEY_BYTES = 255

export interface RoutingKey {
  /** The columns the template reads, in order of appearance. */
  readonly columns: readonly string[]
  /** The key for a message of `namespace`, and for a row of it when the template reads columns. */
  render(namespace: string, row?: RowValues): string
}

/** A row as the template reads it: its index in the part and each column's text (null for NULL). */
export interface RowValues {
  readonly index: number
  value(column: string): string | null | undefined
}

/** Why `template` is not a routing key template, or undefined when it is one. */
export function templateProblem(template: string): string | undefined {
  const parsed = parse(template)
  return typeof parsed === 'string' ? parsed : undefined
}

export function routingKey(template: string): RoutingKey {
  const pieces = parse(template)
  if (typeof pieces === 'string') throw new RoutingKeyError(pieces)
  const columns = pieces.flatMap((piece) => ('column' in piece ? [piece.column] : []))
  return {
    columns,
    render(namespace, row) {
      const key = pieces.map((piece) => renderPiece(piece, namespace, row)).join('')
      if (Buffer.byteLength(key) > MAX_KEY_BYTES)
        throw new RoutingKeyError(
          `namespace ${namespace}: the routing key ${JSON.stringify(key.slice(0, 60))}… is ` +
            `${Buffer.byteLength(key)} bytes, and AMQP allows ${MAX_KEY_BYTES}; shorten routing_key or the values it uses`,
        )
      return key
    },
  }
}

function renderPiece(piece: Piece, namespace: string, row: RowValues | undefined): string {
  if ('text' in piece) return piece.text
  if ('namespace' in piece) return namespace
  const text = row?.value(piece.column)
  if (text === null || text === undefined)
    throw new RoutingKeyError(
      `namespace ${namespace}, row ${(row?.index ?? 0) + 1} of its part: routing_key uses {column:${piece.column}}, ` +
        `but the row's ${piece.column} is NULL; give every row a value at the source, or change routing_key`,
    )
  return text
}

function parse(template: string): Piece[] | string {
  const pieces: Piece[] = []
  let at = 0
  while (at < template.length) {
    const open = template.indexOf('{', at)
    if (open === -1) {
      pieces.push({ text: template.slice(at) })
      break
    }
    if (open > at) pieces.push({ text: template.slice(at, open) })
    const close = template.indexOf('}', open)
    if (close === -1)
      return `the { at position ${open + 1} is never closed; placeholders are {namespace} and {column:<name>}`
    const placeholder = placeholderOf(template.slice(open + 1, close))
    if (!placeholder)
      return `unknown placeholder ${template.slice(open, close + 1)}: use {namespace} or {column:<name>}`
    pieces.push(placeholder)
    at = close + 1
  }
  return pieces
}

function placeholderOf(inside: string): Piece | undefined {
  if (inside === 'namespace') return { namespace: true }
  const column = /^column:(.+)$/s.exec(inside)?.[1]
  return column === undefined ? undefined : { column }
}
