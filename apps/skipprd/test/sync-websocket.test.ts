/**
 * Exactly once from an application: application processes send numbered records with a `Sender` on
 * a disk slot to a long-running `skipprd sync` with a Websocket source, into PostgreSQL and into
 * DuckDB, while both the applications and skipprd are SIGKILLed at random and started again. Every
 * record lands exactly once, and in PostgreSQL (one write at a time, each batch one transaction) in
 * order per sender; a DuckDB table keeps no order to check. One application asks for durable acks
 * (`request_durable_ack=on`: it trims a record only once it has landed), the other takes plain acks
 * (once committed in the WAL).
 *
 * CI size: SKIPPR_WS_RECORDS (default 20,000) records in all, SKIPPR_WS_KILLS (default 5) kills of
 * skipprd and as many of the applications. By hand: SKIPPR_WS_RECORDS=200000 SKIPPR_WS_KILLS=50.
 */
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePorts } from '@skippr/test-servers'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { query } from './support/duckdb.js'
import { freshDatabase } from './support/postgres.js'
import { type Project, project } from './support/project.js'
import { AppProcess, SyncProcess, websocketConfig } from './support/websocket-sync.js'

const RECORDS = Number(process.env.SKIPPR_WS_RECORDS ?? 20_000)
const KILLS = Number(process.env.SKIPPR_WS_KILLS ?? 5)
const SENDERS = ['app-durable', 'app-acked'] as const
const PER_SENDER = RECORDS / SENDERS.length
/** How long the destination may take to hold everything after the last restart. */
const SETTLE_MS = 180_000
const TIMEOUT_MS = 120_000 + KILLS * 8_000 + RECORDS * 2 + SETTLE_MS

let p: Project
let port: number
const processes: { kill(): Promise<void> }[] = []

beforeEach(async () => {
  ;[port] = (await freePorts(1)) as [number]
})
afterEach(async () => {
  for (const child of processes.splice(0)) await child.kill()
  await p?.remove()
})

/** One row per record as the destination holds it, in the order it was written. */
type Landed = { sender: string; n: number }[]

interface Destination {
  readonly sink: string
  /**
   * Whether `landedAll` gives the rows in the order they were written. A DuckDB table does not: its
   * sink loads queued batches together without keeping insertion order (rows have none to keep).
   */
  readonly ordered: boolean
  readonly env: Record<string, string>
  /** Every landed row, once skipprd has been given the chance to land what it committed. */
  landedAll(sync: SyncProcess): Promise<Landed>
  close(): Promise<void>
}

async function postgres(): Promise<Destination> {
  const database = await freshDatabase('skippr_ws')
  const db = database.client
  const count = async () =>
    Number(
      (await db.query('SELECT count(*) AS n FROM public.events').catch(() => ({ rows: [{ n: 0 }] }))).rows[0]
        .n,
    )
  return {
    // One write at a time, so the rows' transaction order is the order batches were committed in.
    sink: `Postgres: { connection_string: \${WAREHOUSE_URL}, concurrent_writes: 1 }`,
    ordered: true,
    env: { WAREHOUSE_URL: database.url },
    async landedAll() {
      const deadline = Date.now() + SETTLE_MS
      while ((await count()) < RECORDS && Date.now() < deadline) await sleep(250)
      // Each batch is one transaction (xmin), its rows in the order COPY wrote them (ctid).
      const { rows } = await db.query('SELECT sender, n FROM public.events ORDER BY xmin::text::bigint, ctid')
      return rows as Landed
    },
    close: () => database.drop(),
  }
}

function duckdb(file: () => string): Destination {
  return {
    sink: 'Duckdb: { path: ./warehouse.duckdb }',
    ordered: false,
    env: {},
    // The file is skipprd's while it runs: stop it (it lands what it committed, for a grace period),
    // read, and start it again while rows are missing.
    async landedAll(sync) {
      const deadline = Date.now() + SETTLE_MS
      for (;;) {
        await sync.stop()
        const rows = (await query(file(), 'SELECT sender, n FROM main.events')) as Landed
        if (rows.length >= RECORDS || Date.now() > deadline)
          return rows.map((r) => ({ ...r, n: Number(r.n) }))
        await sync.start()
        await sleep(2_000)
      }
    },
    async close() {},
  }
}

describe.each([
  ['PostgreSQL', () => postgres()],
  ['DuckDB', async () => duckdb(() => path.join(p.dir, 'warehouse.duckdb'))],
])('Websocket source into %s', (_name, destination) => {
  it(
    `${RECORDS} records from ${SENDERS.length} applications land exactly once (in order per sender where the table keeps the order written), through ${KILLS} SIGKILLs of skipprd and ${KILLS} of the applications`,
    async () => {
      const dest = await destination()
      try {
        p = await project(websocketConfig(port, dest.sink))
        const sfDir = path.join(p.dir, 'sf')
        await mkdir(sfDir)
        const sync = new SyncProcess(p.dir, port, dest.env)
        processes.push(sync)
        // Paced so that the applications are still sending while the kills happen.
        const groups = PER_SENDER / 100
        const pauseMs = Math.max(5, Math.round((KILLS * 2 * 1_500) / groups))
        const apps = SENDERS.map(
          (senderId) =>
            new AppProcess({
              port,
              sfDir,
              senderId,
              total: PER_SENDER,
              durable: senderId === 'app-durable',
              pauseMs,
            }),
        )
        processes.push(...apps)
        await sync.start()
        for (const app of apps) app.start()

        let appKills = 0
        while (sync.kills < KILLS || appKills < KILLS) {
          await sleep(200 + Math.random() * 800)
          const sending = apps.filter((app) => app.running && !app.finished)
          const killSync =
            appKills >= KILLS || sending.length === 0 || (sync.kills < KILLS && Math.random() < 0.5)
          if (killSync) {
            if (sync.kills >= KILLS) break
            await sync.kill()
            await sync.start()
          } else {
            const app = sending[Math.floor(Math.random() * sending.length)]!
            await app.kill()
            appKills++
            app.start()
          }
        }
        // Acknowledged everything: the durable application's records have landed, the other's are committed.
        await Promise.all(apps.map((app) => app.done()))
        const landed = await dest.landedAll(sync)

        console.log(
          `Websocket into ${_name}: ${landed.length} rows of ${RECORDS}; skipprd killed ${sync.kills}x, applications ${appKills}x`,
        )
        for (const senderId of SENDERS) {
          const ns = landed.filter((row) => row.sender === senderId).map((row) => row.n)
          expect({ senderId, ...gaps(ns), descents: dest.ordered ? descents(ns) : 0 }).toEqual({
            senderId,
            missing: [],
            repeated: [],
            descents: 0,
          })
          expect(ns).toHaveLength(PER_SENDER)
        }
        expect(landed).toHaveLength(RECORDS)
      } finally {
        for (const child of processes) await child.kill()
        await dest.close()
      }
    },
    TIMEOUT_MS,
  )
})

it('sync --once is refused in one line: a push source has nothing to read now', async () => {
  p = await project(websocketConfig(port, 'Duckdb: { path: ./warehouse.duckdb }'))
  const run = await runCli(['sync', '--pipeline', 'events', '--once', '--output', 'text'], { cwd: p.dir })
  expect(run.code).not.toBe(0)
  expect(run.stderr).toBe(
    "[skippr] config failed: pipeline 'events': data_sources.app (Websocket) receives what clients send for as long as its sync runs: run it on its own, `skipprd sync --pipeline events` without --once\n",
  )
}, 60_000)

/** What differs from 1..PER_SENDER, each once: missing and repeated numbers (the first few of each). */
function gaps(ns: readonly number[]): { missing: number[]; repeated: number[] } {
  const seen = new Map<number, number>()
  for (const n of ns) seen.set(n, (seen.get(n) ?? 0) + 1)
  const missing: number[] = []
  for (let n = 1; n <= PER_SENDER && missing.length < 10; n++) if (!seen.has(n)) missing.push(n)
  const repeated = [...seen]
    .filter(([, times]) => times > 1)
    .map(([n]) => n)
    .slice(0, 10)
  return { missing, repeated }
}

/** How often a number follows a larger one: 0 when they were written in order. */
function descents(ns: readonly number[]): number {
  return ns.filter((n, i) => i > 0 && n < ns[i - 1]!).length
}
