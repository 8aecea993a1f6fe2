/**
 * `--metrics-addr`: /metrics scraped over HTTP during a real sync into DuckDB, and after it,
 * compared with what the sync's own events say; /healthz; and bad addresses refused in one line.
 */
import { createServer } from 'node:net'
import { createInterface } from 'node:readline'
import { freePorts } from '@skippr/test-servers'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { exited, runCli, spawnCli } from './support/cli.js'
import { bikehireConfig, type Project, project } from './support/project.js'
import { scrape } from './support/scrape.js'

/** Enough that a scrape lands in the middle of the run. */
const ROWS = 2_000_000

let p: Project
beforeEach(async () => {
  p = await project(bikehireConfig({ rows: ROWS, batchRows: 10_000 }))
})
afterEach(async () => {
  await p.remove()
})

const LABELS = 'namespace="rentals",pipeline="bikehire"'

describe('--metrics-addr', () => {
  it('serves counters that agree with the sync while it runs and with sync_complete after', async () => {
    const [port] = (await freePorts(1)) as [number]
    const url = `http://127.0.0.1:${port}`
    // Every-pipeline mode, long-running: it stays up after the run, so a scrape sees the finished run.
    const child = spawnCli(['sync', '--output', 'json', '--metrics-addr', String(port)], {
      cwd: p.dir,
    })
    const events: Record<string, unknown>[] = []
    createInterface({ input: child.stdout! }).on('line', (line) => events.push(JSON.parse(line)))
    try {
      // During the run: some rows landed, not all; the lease held; no more landed than read.
      const landedKey = `skippr_sink_rows_landed_total{${LABELS},sink="warehouse"}`
      let during = new Map<string, number>()
      await expect
        .poll(
          async () => {
            during = await scrape(url).catch(() => new Map())
            const landed = during.get(landedKey) ?? 0
            return landed > 0 && landed < ROWS
          },
          { timeout: 30_000, interval: 10 },
        )
        .toBe(true)
      expect(during.get('skippr_lease_held{pipeline="bikehire"}')).toBe(1)
      expect(during.get('skippr_lease_token{pipeline="bikehire"}')).toBe(1)
      expect(during.get(`skippr_source_rows_read_total{${LABELS}}`)).toBeGreaterThanOrEqual(
        during.get(landedKey) ?? 0,
      )
      expect((await fetch(`${url}/healthz`)).status).toBe(200)
      const complete = () => events.find((e) => e.event === 'sync_complete')

      await expect.poll(complete, { timeout: 60_000, interval: 50 }).toBeDefined()
      const done = complete() as { total_rows: number }
      expect(done.total_rows).toBe(ROWS)
      const after = await scrape(url)
      expect(after.get(`skippr_source_rows_read_total{${LABELS}}`)).toBe(ROWS)
      expect(after.get(`skippr_wal_rows_committed_total{${LABELS}}`)).toBe(ROWS)
      expect(after.get(`skippr_sink_rows_landed_total{${LABELS},sink="warehouse"}`)).toBe(done.total_rows)
      expect(after.get(`skippr_wal_bytes_committed_total{${LABELS}}`)).toBe(
        after.get(`skippr_source_bytes_read_total{${LABELS}}`),
      )
      const landedWrites = after.get(
        'skippr_sink_writes_total{outcome="landed",pipeline="bikehire",sink="warehouse"}',
      )
      expect(landedWrites).toBeGreaterThan(0)
      expect(
        after.get('skippr_sink_write_duration_seconds_count{pipeline="bikehire",sink="warehouse"}'),
      ).toBe(landedWrites)
      expect(
        after.get(
          'skippr_sink_write_duration_seconds_bucket{le="+Inf",pipeline="bikehire",sink="warehouse"}',
        ),
      ).toBe(landedWrites)
      expect(after.get('skippr_sync_runs_total{outcome="completed",pipeline="bikehire"}')).toBe(1)
      expect(after.get('skippr_wal_pending_batches{pipeline="bikehire"}')).toBe(0)
      expect(after.get('skippr_lease_held{pipeline="bikehire"}')).toBe(0)
      expect([...after.keys()].some((key) => key.startsWith('process_cpu_seconds_total'))).toBe(true)
      const health = (await (await fetch(`${url}/healthz`)).json()) as unknown
      expect(health).toEqual({ status: 'ok', pipelines: { bikehire: 'idle' } })
    } finally {
      // Exited before the project directory goes: a sync still stopping writes into its WAL.
      child.kill('SIGTERM')
      await exited(child)
    }
  }, 120_000)

  it('refuses an address it cannot use, in one line, before syncing anything', async () => {
    const bad = await runCli(['sync', '-p', 'bikehire', '--once', '--metrics-addr', 'nope'], { cwd: p.dir })
    expect(bad.code).toBe(1)
    expect(bad.stderr).toBe(
      '[skippr] config failed: --metrics-addr "nope": expected a port (e.g. 9464, on 127.0.0.1) or host:port (e.g. 0.0.0.0:9464)\n',
    )
    const taken = createServer().listen(0, '127.0.0.1')
    await new Promise((resolve) => taken.once('listening', resolve))
    const { port } = taken.address() as { port: number }
    try {
      const busy = await runCli(['sync', '-p', 'bikehire', '--once'], {
        cwd: p.dir,
        env: { SKIPPR_METRICS_ADDR: String(port) },
      })
      expect(busy.code).toBe(1)
      expect(busy.stderr).toBe(
        `[skippr] config failed: --metrics-addr 127.0.0.1:${port}: cannot listen (EADDRINUSE); choose another port or free this one\n`,
      )
    } finally {
      taken.close()
    }
  })
})
