/**
 * The sink's transactions left open by a writer that is gone, ended at once rather than after
 * Snowflake's own rule (a detached transaction that blocks another and has been idle for 5 minutes)
 * while the pipeline's writes wait for its lock on the fence row.
 *
 * Each batch's transaction is named `SKIPPR_<hash of the fence table and pipeline>_<fence token>`
 * (`BEGIN NAME`). The writer lease's tokens strictly increase across acquisitions, so a
 * transaction of the same fence row and pipeline named with a lower token than this writer's was
 * begun by a writer that no longer holds the lease: a process that died (the usual case: a crash
 * mid-write), or one deposed and still running. Its session is aborted first
 * (`SYSTEM$ABORT_SESSION`), so a deposed writer cannot go on after its transaction ends with
 * statements that would run outside it (a COPY or a ledger row in autocommit); then the
 * transaction (`SYSTEM$ABORT_TRANSACTION`). Nothing else is touched: not a transaction of this
 * writer's token (another session of this writer), not one of another pipeline or ledger, not one
 * of another program (another name), not the current session's.
 */
import type { Logger } from '@skippr/connector-api'
import type { Row, Session } from './client.js'
import { shortHash } from './names.js'

/** The name of a batch's transaction: which fence row it holds, and with which token. */
export function transactionName(fences: string, pipeline: string, fence: bigint): string {
  return `${namePrefix(fences, pipeline)}${fence}`
}

/** Aborts the transactions of writers that lost the lease (see above); how many it aborted. */
export async function abortDetached(
  session: Session,
  fences: string,
  pipeline: string,
  fence: bigint,
  logger: Logger,
): Promise<number> {
  const prefix = namePrefix(fences, pipeline)
  const transactions = await session.run('SHOW TRANSACTIONS')
  const stale = transactions.filter((t) => lowerToken(t, prefix, fence))
  if (stale.length === 0) return 0
  const [current] = await session.run('SELECT CURRENT_SESSION()')
  const own = String(Object.values(current ?? {})[0] ?? '')
  let aborted = 0
  for (const t of stale) {
    const sessionId = digits(t.session)
    const transactionId = digits(t.id)
    if (!sessionId || !transactionId || sessionId === own) continue
    await session.run(`SELECT SYSTEM$ABORT_SESSION(${sessionId})`)
    await session.run(`SELECT SYSTEM$ABORT_TRANSACTION(${transactionId})`)
    logger.info('aborted the open transaction of a writer that lost the lease', {
      pipeline,
      transaction: transactionId,
      session: sessionId,
      name: String(t.name),
    })
    aborted++
  }
  return aborted
}

/** Upper case: Snowflake upper-cases an unquoted name, and this one is only letters, digits, `_`. */
function namePrefix(fences: string, pipeline: string): string {
  return `SKIPPR_${shortHash(`${fences}\u0000${pipeline}`).toUpperCase()}_`
}

function lowerToken(transaction: Row, prefix: string, fence: bigint): boolean {
  const name = String(transaction.name ?? '').toUpperCase()
  if (!name.startsWith(prefix)) return false
  const token = name.slice(prefix.length)
  return /^\d+$/.test(token) && BigInt(token) < fence
}

/** An id as the digits it is (SHOW answers numbers, or text): anything else is no id. */
function digits(value: unknown): string | undefined {
  const text = String(value ?? '')
  return /^\d+$/.test(text) ? text : undefined
}
