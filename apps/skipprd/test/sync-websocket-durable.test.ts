/**
 * A Sender with `request_durable_ack=on` hears its durable ack only once its records are in the
 * destination, not when skipprd has committed them to its WAL: with the destination table locked
 * (nothing can land), a plain-ack application is acknowledged and the durable one waits; the lock
 * released, the durable one is acknowledged and its rows are there.
 */
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePorts } from '@skippr/test-servers'
import pg from 'pg'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { type FreshDatabase, freshDatabase } from './support/postgres.js'
import { type Project, project } from './support/project.js'
import { AppProcess, SyncProcess, websocketConfig } from './support/websocket-sync.js'

let p: Project
let port: number
let database: FreshDatabase
const processes: { kill(): Promise<void> }[] = []

beforeEach(async () => {
  ;[port] = (await freePorts(1)) as [number]
  database = await freshDatabase('skippr_ws')
  p = await project(websocketConfig(port, `Postgres: { connection_string: \${WAREHOUSE_URL} }`))
  await mkdir(path.join(p.dir, 'sf'))
})
afterEach(async () => {
  for (const child of processes.splice(0)) await child.kill()
  await database.drop()
  await p.remove()
})

const rowsOf = async (sender: string): Promise<number> =>
  Number(
    (await database.client.query('SELECT count(*) AS n FROM public.events WHERE sender = $1', [sender]))
      .rows[0].n,
  )

it('the durable ack waits for the landing: committed is not enough', async () => {
  const sync = new SyncProcess(p.dir, port, { WAREHOUSE_URL: database.url })
  processes.push(sync)
  await sync.start()
  const app = (senderId: string, durable: boolean) => {
    const a = new AppProcess({ port, sfDir: path.join(p.dir, 'sf'), senderId, total: 3, durable, pauseMs: 0 })
    processes.push(a)
    a.start()
    return a
  }
  // The first records create the table.
  await app('first', false).done()
  await expect.poll(() => rowsOf('first').catch(() => 0), { timeout: 60_000 }).toBe(3)

  // Nothing lands while this transaction holds the table: COPY and INSERT wait for it.
  const lock = new pg.Client({ connectionString: database.url })
  await lock.connect()
  try {
    await lock.query('BEGIN')
    await lock.query('LOCK TABLE public.events IN SHARE MODE')
    const durable = app('durable', true)
    // Acked once committed in skipprd's WAL: the plain application is done while nothing lands.
    await app('acked', false).done()
    await sleep(2_000)
    expect(durable.finished).toBe(false)
    expect(await rowsOf('durable')).toBe(0)
    await lock.query('COMMIT')
    await durable.done()
    // Done means the durable ack came: the rows were in the destination by then.
    expect(await rowsOf('durable')).toBe(3)
  } finally {
    await lock.end()
  }
}, 120_000)
