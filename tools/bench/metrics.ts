/**
 * The cost of `skipprd sync --metrics-addr`: the same `skipprd sync --once` of `--rows` Sample rows
 * into DuckDB (lib/sample-sync.ts), with the metrics endpoint on a free port of 127.0.0.1 and a
 * scraper in this process that GETs /metrics every second while the sync runs, beside the run
 * without. Target: ≥ 0.98× the rows/s of the run without.
 *
 * The address is given as `SKIPPR_METRICS_ADDR`, which skipprd reads where `--metrics-addr` is not
 * set: the same option, so lib/sample-sync.ts's command line serves both runs. Every answered scrape
 * must be a 200 holding `skippr_source_rows_read_total`, and every run at least one answered; a
 * scrape may find nothing listening only before skipprd's first answer (it is starting) or after
 * its last (it is exiting), never between. Reported beside the rates: skipprd's CPU time (user +
 * system) and peak RSS, the size of one /metrics answer and the scrape latency.
 *
 * skipprd is the BUILT CLI in a child process, every run on a new host (an empty DATA_DIR). In each
 * round the two runs go back to back, taking turns to go first (lib/rounds.ts); a ratio is taken
 * within a round and the median of the rounds counts, with their range. The machine is shared:
 * nothing here fails on a number; it reports.
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * Run:  pnpm --filter @skippr/bench metrics [--rows N] [--rounds N]
 * Env:  SKIPPR_BENCH_DIR  where the temporary data goes (default: the OS temp dir)
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { freePorts } from '@skippr/test-servers'
import { cpuCell, formatRate, machineLine, median, ratioCell, table, verdict } from './lib/report.js'
import { inRotation } from './lib/rounds.js'
import { sampleSyncOnce } from './lib/sample-sync.js'
import type { SkipprdRun } from './lib/sync-once.js'

const TARGET = 0.98
const SCRAPE_EVERY_MS = 1_000
/** Far above a healthy scrape's few ms; a scrape that takes longer counts as unanswered. */
const SCRAPE_TIMEOUT_MS = 5_000
const METRIC = 'skippr_source_rows_read_total'
const MB = 1024 * 1024

const { rows: ROWS, rounds: ROUNDS } = commandLine()
const dir = await mkdtemp(path.join(process.env.SKIPPR_BENCH_DIR ?? os.tmpdir(), 'skippr-bench-metrics-'))

function commandLine(): { rows: number; rounds: number } {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((arg) => arg !== '--'),
    options: { rows: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '5' } },
  })
  const positive = (name: string, value: string | undefined) => {
    const n = Number(value)
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} must be an integer ≥ 1, got ${value}`)
    return n
  }
  return { rows: positive('rows', values.rows), rounds: positive('rounds', values.rounds) }
}

// ---- the scraper ----

/** An answered scrape: its size and how long the whole answer took. */
interface Scrape {
  readonly bytes: number
  readonly ms: number
}

/** One GET of /metrics; undefined when nothing answered (not listening yet, or any more). */
async function scrapeOnce(url: string): Promise<Scrape | undefined> {
  const at = performance.now()
  let response: Response
  let text: string
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS) })
    text = await response.text()
  } catch {
    return undefined
  }
  const ms = performance.now() - at
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}, expected 200`)
  if (!text.includes(METRIC)) throw new Error(`GET ${url} answered 200 without ${METRIC}`)
  return { bytes: Buffer.byteLength(text), ms }
}

/** GETs `url` every second until `stop` is aborted; what each scrape got, in order. */
async function scrapeEverySecond(url: string, stop: AbortSignal): Promise<(Scrape | undefined)[]> {
  const scrapes: (Scrape | undefined)[] = []
  const started = performance.now()
  for (let next = 1; ; next++) {
    // Each on the second after spawn, however long the one before took.
    const wait = started + next * SCRAPE_EVERY_MS - performance.now()
    const stopped = await sleep(Math.max(0, wait), false, { signal: stop }).catch(() => true)
    if (stopped || stop.aborted) return scrapes
    scrapes.push(await scrapeOnce(url))
  }
}

/** The answered scrapes, after checking that none went unanswered between two answered ones. */
function answered(name: string, scrapes: readonly (Scrape | undefined)[]): Scrape[] {
  const first = scrapes.findIndex((s) => s !== undefined)
  const last = scrapes.findLastIndex((s) => s !== undefined)
  if (scrapes.length === 0)
    throw new Error(
      `${name}: the run ended before the first scrape at ${SCRAPE_EVERY_MS} ms; give it more --rows`,
    )
  if (first === -1)
    throw new Error(`${name}: none of its ${scrapes.length} scrapes was answered; skipprd served no /metrics`)
  const between = scrapes.slice(first, last + 1)
  if (between.includes(undefined))
    throw new Error(
      `${name}: /metrics stopped answering while the sync ran (scrapes ${first + 1}–${last + 1})`,
    )
  return between as Scrape[]
}

// ---- the runs ----

interface MetricsRun extends SkipprdRun {
  readonly scrapes: readonly Scrape[]
  /** Scrapes that found nothing listening, before skipprd started serving or after it stopped. */
  readonly unanswered: number
}

async function plainRun(round: number): Promise<SkipprdRun> {
  const name = `plain-${round}`
  try {
    return await sampleSyncOnce(dir, { name, rows: ROWS })
  } finally {
    await rm(path.join(dir, name), { recursive: true, force: true })
  }
}

async function metricsRun(round: number): Promise<MetricsRun> {
  const name = `metrics-${round}`
  const [port] = (await freePorts(1)) as [number]
  const stop = new AbortController()
  const scraping = scrapeEverySecond(`http://127.0.0.1:${port}/metrics`, stop.signal)
  // A wrong answer surfaces when the sync has ended, not as an unhandled rejection meanwhile.
  scraping.catch(() => {})
  try {
    const run = await sampleSyncOnce(dir, { name, rows: ROWS, env: { SKIPPR_METRICS_ADDR: String(port) } })
    stop.abort()
    const all = await scraping
    const scrapes = answered(name, all)
    return { ...run, scrapes, unanswered: all.length - scrapes.length }
  } finally {
    stop.abort()
    await scraping.catch(() => {})
    await rm(path.join(dir, name), { recursive: true, force: true })
  }
}

// ---- report ----

const ms = (runs: readonly { ms: number }[]) => median(runs.map((r) => r.ms))
/** A median with the range of the values. */
const spread = (xs: readonly number[], digits: number) =>
  `${median(xs).toFixed(digits)}${xs.length > 1 ? ` (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})` : ''}`

function runCell(runs: readonly SkipprdRun[]): string {
  const rss = runs.map((r) => r.peakRss)
  const peak = rss.includes(undefined) ? '?' : `${(Math.max(...(rss as number[])) / MB).toFixed(0)} MB`
  const sync = median(runs.map((r) => r.syncMs))
  return `${formatRate(ROWS, ms(runs))} (sync ${formatRate(ROWS, sync)}), ${cpuCell(runs)}, peak RSS ${peak}`
}

function report(rounds: readonly { plain: SkipprdRun; metrics: MetricsRun }[]): void {
  const withMetrics = rounds.map((r) => r.metrics)
  const ratios = rounds.map((r) => r.plain.ms / r.metrics.ms)
  const cpu = rounds.every((r) => r.plain.cpuMs !== undefined && r.metrics.cpuMs !== undefined)
    ? rounds.map((r) => r.metrics.cpuMs! / r.plain.cpuMs!)
    : undefined
  const scrapes = withMetrics.flatMap((r) => r.scrapes)
  const rows = [
    ['part', 'with --metrics-addr, scraped every 1 s', 'without', 'ratio', 'target', 'met'],
    [
      `sync of ${ROWS.toLocaleString('en')} rows`,
      runCell(withMetrics),
      runCell(rounds.map((r) => r.plain)),
      ratioCell(ratios),
      `≥ ${TARGET}×`,
      verdict(median(ratios) >= TARGET),
    ],
    ['    CPU time, with over without', '', '', cpu ? ratioCell(cpu) : '?', '—', ''],
  ]
  console.log(`\n${table(rows)}\n`)
  console.log(
    `scrapes: ${scrapes.length} answered, all 200 with ${METRIC} (${spread(
      withMetrics.map((r) => r.scrapes.length),
      0,
    )} per run; ${withMetrics.reduce((n, r) => n + r.unanswered, 0)} found nothing listening, ` +
      `at start-up or exit); one answer ${spread(
        scrapes.map((s) => s.bytes),
        0,
      )} bytes, latency ${spread(
        scrapes.map((s) => s.ms),
        1,
      )} ms (median, range of all scrapes)`,
  )
  console.log(
    `Medians of ${ROUNDS} rounds: rows/s spawn to exit ("sync": sync_complete's elapsed_ms), CPU of ` +
      'skipprd (user + system), its highest peak RSS. A ratio is taken within a round: rows/s with the ' +
      "endpoint over rows/s without; CPU: the run with the endpoint's CPU time over the run without's.",
  )
}

// ---- main ----

try {
  console.log(machineLine('skipprd --metrics-addr bench'))
  const started = performance.now()
  const rounds: { plain: SkipprdRun; metrics: MetricsRun }[] = []
  for (let round = 0; round < ROUNDS; round++) {
    rounds.push(await inRotation(round, { plain: () => plainRun(round), metrics: () => metricsRun(round) }))
    console.log(`round ${round + 1} of ${ROUNDS} done`)
  }
  report(rounds)
  console.log(machineLine(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`))
} finally {
  await rm(dir, { recursive: true, force: true })
}
