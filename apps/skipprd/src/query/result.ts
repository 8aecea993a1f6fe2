/** What a statement answers, before it is rendered (render.ts). */

/** A value as text; null is SQL NULL. */
export type Cell = string | null

export type StatementResult =
  /** A table: rows arrive in chunks, so a large result is never held whole unless a display needs it. */
  | {
      readonly kind: 'rows'
      readonly header: readonly string[]
      /** Numeric columns, right-aligned in the table display. */
      readonly numeric: readonly boolean[]
      readonly chunks: AsyncIterable<Cell[][]>
    }
  /** Rows that keep coming until the statement is stopped or its LIMIT met (STREAM). */
  | {
      readonly kind: 'stream'
      readonly header: readonly string[]
      readonly chunks: AsyncIterable<Cell[][]>
    }
  /** A JSON document (SHOW PIPELINE). */
  | { readonly kind: 'document'; readonly value: unknown }
  /** What an admin statement did. */
  | { readonly kind: 'message'; readonly text: string }

export function rowsOf(
  header: readonly string[],
  numeric: readonly boolean[],
  rows: Cell[][],
): StatementResult {
  return {
    kind: 'rows',
    header,
    numeric,
    chunks: (async function* () {
      yield rows
    })(),
  }
}
