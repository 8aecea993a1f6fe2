/**
 * A push source's own metrics on `--metrics-addr`, through the real CLI: a long-running sync of an
 * HttpServer pipeline and of a Websocket pipeline into DuckDB, requests and frames pushed at it, and
 * /metrics scraped over HTTP. The values equal what was pushed and answered, and the rows
 * `sync_complete` reports once the sync is stopped.
 */
import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { Sender } from '@skippr/sf'
import { freePorts } from '@skippr/test-servers'
import { afterEach, describe, expect, it } from 'vitest'
import { exited, spawnCli } from './support/cli.js'
import { httpPushConfig } from './support/http-push.js'
import { type Project, project } from './support/project.js'
import { scrape } from './support/scrape.js'
import { accepts, websocketConfig } from './support/websocket-sync.js'

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** `skipprd sync --pipeline <pipeline> --output json --metrics-addr <port>` in `p`; its events as they come. */
async function startSync(p: Project, pipeline: string) {
  const [metricsPort] = (await freePorts(1)) as [number]
  const child = spawnCli(
    ['sync', '--pipeline', pipeline, '--output', 'json', '--metrics-addr', String(metricsPort)],
    { cwd: p.dir },
  )
  const events: Record<string, unknown>[] = []
  createInterface({ input: child.stdout! }).on('line', (line) => events.push(JSON.parse(line)))
  child.stderr?.resume()
  cleanups.push(() => stop(child))
  return { child, events, metrics: `http://127.0.0.1:${metricsPort}` }
}

/** SIGTERM: it commits what it holds and lands it; exited before the project directory goes. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
  await exited(child)
}

async function listening(port: number, child: ChildProcess): Promise<void> {
  while (!(await accepts(port))) {
    if (child.exitCode !== null) throw new Error('skipprd sync exited before its source listened')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** The rows sync_complete reports once the sync is stopped. */
async function rowsWhenStopped(sync: Awaited<ReturnType<typeof startSync>>): Promise<number> {
  await stop(sync.child)
  const complete = sync.events.find((e) => e.event === 'sync_complete') as { total_rows: number }
  expect(complete).toBeDefined()
  return complete.total_rows
}

describe('push source metrics on --metrics-addr', () => {
  it('HttpServer: requests by status, body bytes received and rows accepted', async () => {
    const [port] = (await freePorts(1)) as [number]
    const p = await project(
      httpPushConfig(port, 'Duckdb: { path: ./warehouse.duckdb }', ', max_request_bytes: 1000'),
    )
    cleanups.push(() => p.remove())
    const sync = await startSync(p, 'push')
    await listening(port, sync.child)
    const post = async (body: string, headers: Record<string, string> = {}, at = '/') =>
      (await fetch(`http://127.0.0.1:${port}${at}`, { method: 'POST', headers, body })).status
    const REQUESTS = 7
    const ROWS_EACH = 3
    let bytes = 0
    for (let r = 0; r < REQUESTS; r++) {
      let body = ''
      for (let i = 0; i < ROWS_EACH; i++) body += `${JSON.stringify({ r, i })}\n`
      bytes += Buffer.byteLength(body)
      expect(await post(body, { 'idempotency-key': `k${r}` })).toBe(200)
    }
    // A repeat of a committed request: read (its bytes count), answered 200, no rows.
    const again = `${JSON.stringify({ r: 0, i: 0 })}\n`
    bytes += Buffer.byteLength(again)
    expect(await post(again, { 'idempotency-key': 'k0' })).toBe(200)
    const bad = '{"r":\n'
    bytes += Buffer.byteLength(bad)
    expect(await post(bad)).toBe(400)
    // Refused before their bodies are read.
    expect(await post(`{"pad":"${'x'.repeat(2000)}"}\n`)).toBe(413)
    expect(await post('{}\n', {}, '/elsewhere')).toBe(404)

    const samples = await scrape(sync.metrics)
    const of = (name: string, labels = '') =>
      samples.get(`skippr_push_http_${name}{${labels}${labels && ','}pipeline="push"}`)
    expect(of('requests_total', 'code="200"')).toBe(REQUESTS + 1)
    expect(of('requests_total', 'code="400"')).toBe(1)
    expect(of('requests_total', 'code="413"')).toBe(1)
    expect(of('requests_total', 'code="404"')).toBe(1)
    expect(of('request_bytes_total')).toBe(bytes)
    expect(of('rows_accepted_total')).toBe(REQUESTS * ROWS_EACH)
    expect(of('wal_full_refusals_total')).toBe(0)
    expect(samples.get('skippr_wal_rows_committed_total{namespace="events",pipeline="push"}')).toBe(
      REQUESTS * ROWS_EACH,
    )
    expect(await rowsWhenStopped(sync)).toBe(REQUESTS * ROWS_EACH)
  }, 120_000)

  it('Websocket: senders connected, sessions, frames received and replayed, DROP frames sent', async () => {
    const [port] = (await freePorts(1)) as [number]
    // Commits wait 5 s, so the first sender's later frames are received and not yet acked when it goes.
    const p = await project(
      websocketConfig(port, 'Duckdb: { path: ./warehouse.duckdb }', ', commit_interval_ms: 5000'),
    )
    cleanups.push(() => p.remove())
    const sfDir = await mkdtemp(path.join(tmpdir(), 'skippr-metrics-push-'))
    cleanups.push(() => rm(sfDir, { recursive: true, force: true }))
    const sync = await startSync(p, 'events')
    await listening(port, sync.child)
    const of = async (name: string, labels = '') =>
      (await scrape(sync.metrics)).get(`skippr_push_ws_${name}{${labels}${labels && ','}pipeline="events"}`)
    const connect = `ws::addr=127.0.0.1:${port};sf_dir=${sfDir};sender_id=app;close_flush_timeout_millis=0;`
    const RECORDS = 50
    const record = (n: number) => Buffer.from(`${JSON.stringify({ n })}\n`)

    const first = await Sender.fromConfig(connect, { onError: () => {} })
    // Acked with a commit: the next one is 5 s away.
    await first.sendBlocking(record(1))
    await first.flush()
    // Appended together (one fsync), well inside the commit interval.
    await Promise.all(Array.from({ length: RECORDS - 1 }, (_, i) => first.sendBlocking(record(i + 2))))
    await expect.poll(() => of('frames_received_total'), { timeout: 10_000, interval: 20 }).toBe(RECORDS)
    expect(await of('senders_connected')).toBe(1)
    // Gone before the commit: its frames stay in the slot, and the next sender on it sends them again.
    await first.close().catch(() => {})
    expect(first.ackedFsn).toBe(1n)

    const errors: Error[] = []
    const second = await Sender.fromConfig(connect, { onError: (e) => void errors.push(e) })
    cleanups.push(() => second.close().catch(() => {}))
    await second.sendBlocking(Buffer.from('not json'))
    await second.sendBlocking(record(RECORDS + 1))
    await second.flush()
    expect(errors).toHaveLength(1)
    expect(second.counters().totalServerErrors).toBe(1)

    expect(await of('sessions_opened_total')).toBe(2)
    expect(await of('senders_connected')).toBe(1)
    expect(await of('frames_received_total')).toBe(RECORDS + (RECORDS - 1) + 2)
    expect(await of('frames_replayed_total')).toBe(RECORDS - 1)
    expect(await of('errors_sent_total', 'category="DROP"')).toBe(1)
    expect(await of('errors_sent_total', 'category="HALT"')).toBe(0)
    await second.close()
    await expect.poll(() => of('senders_connected'), { timeout: 10_000, interval: 20 }).toBe(0)
    expect(await rowsWhenStopped(sync)).toBe(RECORDS + 1)
  }, 120_000)
})
