/**
 * Trying a statement inside the write's transaction without losing it: under a savepoint, kept
 * when it succeeds, undone when the server refuses a row's data (SQLSTATE class 22 or 23), so the
 * transaction goes on. Any other failure is thrown, and the transaction is left aborted for the
 * caller to roll back. Only the search for refused rows (refused-rows.ts) uses these.
 */
import type pg from 'pg'
import { sqlStateOf } from './errors.js'

const SAVEPOINT = 'skippr_try'

/** Whether the server refused a row for its data: a data exception (22) or a constraint (23). */
export function refusesRow(error: unknown): boolean {
  const state = sqlStateOf(error)
  return state !== undefined && (state.startsWith('22') || state.startsWith('23'))
}

/** Runs `work` under a savepoint; returns the server's refusal, or undefined when `work` was kept. */
export async function tryKeeping(client: pg.ClientBase, work: () => Promise<unknown>): Promise<unknown> {
  await client.query(`SAVEPOINT ${SAVEPOINT}`)
  try {
    await work()
  } catch (error) {
    return undo(client, error)
  }
  await client.query(`RELEASE SAVEPOINT ${SAVEPOINT}`)
  return undefined
}

/**
 * `tryKeeping` for one statement without parameters, sent with its savepoint in one simple query
 * (one round trip when it succeeds). Returns the statement's rows, or the server's refusal.
 */
export async function tryStatement<R extends pg.QueryResultRow>(
  client: pg.ClientBase,
  sql: string,
): Promise<{ readonly rows: R[] } | { readonly refusal: unknown }> {
  try {
    // A query of several statements answers with one result per statement.
    const results = (await client.query(
      `SAVEPOINT ${SAVEPOINT}; ${sql}; RELEASE SAVEPOINT ${SAVEPOINT}`,
    )) as unknown as pg.QueryResult<R>[]
    return { rows: results[1]?.rows ?? [] }
  } catch (error) {
    return { refusal: await undo(client, error) }
  }
}

async function undo(client: pg.ClientBase, error: unknown): Promise<unknown> {
  if (!refusesRow(error)) throw error
  await client.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}; RELEASE SAVEPOINT ${SAVEPOINT}`)
  return error
}
