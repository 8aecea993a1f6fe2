/**
 * The at-least-once check, for destinations whose retries may land rows again: every copy is
 * tagged — each rental_id is under one part key (`_skippr_batch`) — and a copy is what the
 * destination's retry unit says: a whole part (under a key every row appears the same number of
 * times), or one message (a message id always names the same row). Keeping one copy per key and
 * row then leaves exactly the table verify.ts checks for exactly once. Runs on DuckDB SQL (the
 * mirror, duckdb-mirror.ts).
 */
import { BATCH_COLUMN } from '@skippr/connector-api'
import type { Destination } from './destination.js'
import { EXAMPLES, type Expected, verifyExactlyOnce } from './verify.js'

/** The mirror's column holding a message's id, where a copy is one message. */
export const MESSAGE_COLUMN = '_skippr_message'

export interface CopiesVerdict {
  readonly problems: readonly string[]
  /** Rows landed again by retries, removed by their part key. */
  readonly extraCopies: number
}

export async function verifyOnceAfterCopies(
  destination: Destination,
  expected: Expected,
): Promise<CopiesVerdict> {
  const { table } = destination
  const key = `"${BATCH_COLUMN}"`
  const problems: string[] = []
  const split = await destination.query(
    `SELECT rental_id, count(DISTINCT ${key}) AS keys FROM ${table}
     GROUP BY rental_id HAVING count(DISTINCT ${key}) > 1 ORDER BY rental_id LIMIT ${EXAMPLES}`,
  )
  if (split.length > 0)
    problems.push(
      `rows under more than one part key (landed by two batches): ${split.map((r) => `rental_id ${r.rental_id} ×${r.keys}`).join(', ')}`,
    )
  problems.push(
    ...(destination.retriesCopy === 'messages'
      ? await messagesNameOneRow(destination)
      : await partsCopiedWhole(destination)),
  )
  const [counts] = await destination.query(
    `SELECT count(*) AS rows, count(DISTINCT (${key}, rental_id)) AS once FROM ${table}`,
  )
  await destination.query(
    `CREATE OR REPLACE VIEW rentals_once AS SELECT DISTINCT ON (${key}, rental_id) * FROM ${table}`,
  )
  problems.push(
    ...(await verifyExactlyOnce({ ...destination, table: destination.qualify('rentals_once') }, expected)),
  )
  return { problems, extraCopies: Number(counts?.rows) - Number(counts?.once) }
}

/** Under each part key, every row the same number of times: copies of whole parts only. */
async function partsCopiedWhole(destination: Destination): Promise<string[]> {
  const { table } = destination
  const key = `"${BATCH_COLUMN}"`
  const partial = await destination.query(
    `SELECT ${key} AS part, min(copies) AS fewest, max(copies) AS most
     FROM (SELECT ${key}, rental_id, count(*) AS copies FROM ${table} GROUP BY ALL)
     GROUP BY ALL HAVING min(copies) <> max(copies) ORDER BY 1 LIMIT ${EXAMPLES}`,
  )
  if (partial.length === 0) return []
  return [
    `part copies that are not whole: ${partial.map((r) => `${r.part} (rows ×${r.fewest} to ×${r.most})`).join(', ')}`,
  ]
}

/** Every copy of a message is the same row: a message id never names two rental_ids. */
async function messagesNameOneRow(destination: Destination): Promise<string[]> {
  const { table } = destination
  const id = `"${MESSAGE_COLUMN}"`
  const mixed = await destination.query(
    `SELECT ${id} AS message, count(DISTINCT rental_id) AS rows FROM ${table}
     GROUP BY ALL HAVING count(DISTINCT rental_id) > 1 ORDER BY 1 LIMIT ${EXAMPLES}`,
  )
  if (mixed.length === 0) return []
  return [
    `message ids naming more than one row: ${mixed.map((r) => `${r.message} (${r.rows} rows)`).join(', ')}`,
  ]
}
