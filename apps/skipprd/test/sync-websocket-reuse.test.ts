/**
 * Two applications that use the same `sender_id` (each its own sf_dir) both number their records from
 * 1. skipprd must not take the second one's records for the first one's and ack them as "already
 * delivered": the second is refused with one clear error naming the id, while the first is connected
 * and after it left, and again after skipprd restarts (from the committed offset). Its records stay in
 * its slot; the destination holds every record of the first application exactly once.
 */
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { freePorts } from '@skippr/test-servers'
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
})
afterEach(async () => {
  for (const child of processes.splice(0)) await child.kill()
  await database.drop()
  await p.remove()
})

const rows = async (): Promise<number[]> =>
  (
    await database.client.query('SELECT n FROM public.events WHERE sender = $1 ORDER BY n', ['orders'])
  ).rows.map((r) => Number(r.n))

it('refuses a second application that reuses a sender id; nothing of either is lost or doubled', async () => {
  const sync = new SyncProcess(p.dir, port, { WAREHOUSE_URL: database.url })
  processes.push(sync)
  await sync.start()
  const app = async (sfDir: string, total: number, pauseMs = 0) => {
    await mkdir(path.join(p.dir, sfDir), { recursive: true })
    const a = new AppProcess({
      port,
      sfDir: path.join(p.dir, sfDir),
      senderId: 'orders',
      total,
      durable: false,
      pauseMs,
    })
    processes.push(a)
    a.start()
    return a
  }
  const refusal = /sender id "orders" (is in use by|belongs to) another slot/

  // The first application, connected while the second one tries.
  const first = await app('sf-first', 300, 200)
  await expect.poll(() => rows().catch(() => []), { timeout: 60_000 }).not.toEqual([])
  const whileConnected = await app('sf-second', 50)
  expect(await whileConnected.exitCode()).not.toBe(0)
  expect(whileConnected.errors()).toMatch(refusal)
  await first.done()

  // Once the first has gone, and again after skipprd was killed and started again.
  const afterwards = await app('sf-second', 50)
  expect(await afterwards.exitCode()).not.toBe(0)
  expect(afterwards.errors()).toMatch(refusal)
  await sync.kill()
  await sync.start()
  const afterRestart = await app('sf-second', 50)
  expect(await afterRestart.exitCode()).not.toBe(0)
  expect(afterRestart.errors()).toMatch(refusal)

  // The slot that holds the id carries on after its last record.
  await (await app('sf-first', 400)).done()
  const all = Array.from({ length: 400 }, (_, i) => i + 1)
  await expect.poll(rows, { timeout: 60_000 }).toEqual(all)
}, 120_000)
