/**
 * A full disk and WAL_MAX_TOTAL_BYTES, through the built CLI as a user meets them: Sample → a DuckDB
 * file on the real disk, the pipeline's DATA_DIR (WAL, state, logs, the sink's load files) beside it.
 *
 * The full-disk test mounts a small tmpfs as DATA_DIR, so it needs root (the CI runs as root). Run as
 * another user it fails with "needs root to mount a tmpfs", unless SKIPPR_TEST_NO_TMPFS=1 says to
 * leave it out (then it shows as skipped). To make the disk fill deterministically, the test holds the
 * DuckDB file's lock while the sync reads (the sink retries opening a locked file) and lets go once
 * the sync says reading stopped.
 */
import { execFileSync } from 'node:child_process'
import { closeSync, openSync, statfsSync, writeSync } from 'node:fs'
import { mkdir, readdir, readFile, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { DuckDBInstance } from '@duckdb/node-api'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type CliResult, runCli, spawnCli } from './support/cli.js'
import { query } from './support/duckdb.js'
import { bikehireConfig, type Project, project } from './support/project.js'

const ROWS = 100_000
const MiB = 1024 * 1024
/** Batches of about 300 kB (2,000 sample rows): the WAL on an 8 MiB disk holds some, not all. */
const SMALL_BATCHES = ['    buffer_threshold_bytes: 262144']
const SOURCE = { rows: ROWS, batchRows: 2000 }
const FILES = { WAL_BYTES_PER_FILE: String(MiB) }
/** The tmpfs tests are left out (shown as skipped) only when asked to. */
const optedOut = process.env.SKIPPR_TEST_NO_TMPFS === '1'

let p: Project
let dataDir: string
let mounted = false
let running: ReturnType<typeof spawnCli> | undefined

beforeEach(async () => {
  p = await project()
  dataDir = path.join(p.dir, 'data')
  await mkdir(dataDir)
})
afterEach(async () => {
  // A sync left running by a failed test would keep the tmpfs busy.
  if (running?.exitCode === null && running.signalCode === null) running.kill('SIGKILL')
  running = undefined
  if (mounted) unmount(dataDir)
  mounted = false
  await p.remove()
})

const warehouse = () => path.join(p.dir, 'warehouse.duckdb')
const syncArgs = ['sync', '--pipeline', 'bikehire', '--once', '--output', 'text']
const sync = (env: Record<string, string>) =>
  runCli(syncArgs, { cwd: p.dir, env: { DATA_DIR: dataDir, ...env } })

/** Rows, distinct rental ids and the highest one in the warehouse, and the batches it recorded. */
async function landed(): Promise<{ rows: number; unique: number; highest: number; batches: number }> {
  const [rentals] = await query(
    warehouse(),
    'SELECT count(*) AS n, count(DISTINCT rental_id) AS u, max(rental_id) AS hi FROM main.rentals',
  )
  const [ledger] = await query(warehouse(), 'SELECT count(*) AS n FROM main._skippr_batches')
  return {
    rows: Number(rentals?.n),
    unique: Number(rentals?.u),
    highest: Number(rentals?.hi),
    batches: Number(ledger?.n),
  }
}

/** The row the next sync resumes from (the Sample source's offset), as `SHOW PIPELINE` tells it. */
async function resumeRow(): Promise<number> {
  const shown = await runCli(['query', '--plain', '-s', 'SHOW PIPELINE bikehire'], {
    cwd: p.dir,
    env: { DATA_DIR: dataDir },
  })
  expect(shown.stderr).toBe('')
  const pipeline = JSON.parse(shown.stdout) as { offsets: { committed: { row: number } | null } }
  return pipeline.offsets.committed?.row ?? 0
}

/** Bytes of the pipeline's WAL files. */
async function walBytes(): Promise<number> {
  const dir = path.join(dataDir, 'wal', 'bikehire')
  const names = (await readdir(dir).catch(() => [])).filter((name) => name.includes('.sfa'))
  let total = 0
  for (const name of names) total += (await stat(path.join(dir, name)).catch(() => ({ size: 0 }))).size
  return total
}

/** Holds the DuckDB file's lock, as another program writing to it would: the sync cannot land. */
async function lockWarehouse(): Promise<{ release(): void }> {
  const instance = await DuckDBInstance.create(warehouse())
  return { release: () => instance.closeSync() }
}

/** One stderr line, with no stack trace or second message. */
function onlyLine(result: CliResult): string {
  const lines = result.stderr.split('\n').filter((line) => line !== '')
  expect(lines).toHaveLength(1)
  expect(result.stderr).not.toMatch(/^\s+at /m)
  return lines[0]!
}

describe('WAL_MAX_TOTAL_BYTES', () => {
  it('without a data_sink, stops the run at the cap with one line naming the directory and the fix', async () => {
    await p.write(
      'skippr.yml',
      [
        'data_sources:',
        `  sample: { Sample: { dataset: bikehire, rows: ${ROWS}, batch_rows: 2000 } }`,
        'pipelines:',
        '  bikehire:',
        '    data_source: data_sources.sample',
        ...SMALL_BATCHES,
        `    wal_max_total_bytes: ${3 * MiB}`,
        '',
      ].join('\n'),
    )
    const run = await sync(FILES)
    expect(run.code).toBe(1)
    expect(onlyLine(run)).toBe(
      `[skippr] sync failed: the WAL of pipeline 'bikehire' in ${path.join(dataDir, 'wal', 'bikehire')} ` +
        'reached WAL_MAX_TOTAL_BYTES (3.0 MiB) and nothing lands its batches: give the pipeline a ' +
        'data_sink, raise WAL_MAX_TOTAL_BYTES (or wal_max_total_bytes), or RESET PIPELINE',
    )
    const committed = await resumeRow()
    expect(committed).toBeGreaterThan(0)
    expect(committed).toBeLessThan(ROWS)
    expect(await walBytes()).toBeLessThanOrEqual(3 * MiB)
  })

  it('makes reading wait at the cap; with --once and a destination that cannot land, the retry budget ends the run', async () => {
    await p.write('skippr.yml', bikehireConfig({ ...SOURCE, extra: SMALL_BATCHES.join('\n') }))
    const env = { ...FILES, WAL_MAX_TOTAL_BYTES: String(3 * MiB), SKIPPR_RETRY_BUDGET_SECONDS: '1' }
    const lock = await lockWarehouse()
    let blocked: CliResult
    try {
      blocked = await sync(env)
    } finally {
      lock.release()
    }
    expect(blocked.code).toBe(1)
    expect(onlyLine(blocked)).toMatch(
      /^\[skippr\] sync failed: pipeline 'bikehire': \d+ committed batch\(es\) could not land within 1 s \(.*\); they stay in the WAL: retry later$/,
    )
    // Reading waited at the cap: only what fits under it was read and committed.
    const committed = await resumeRow()
    expect(committed).toBeGreaterThan(0)
    expect(committed).toBeLessThan(ROWS)
    expect(await walBytes()).toBeLessThanOrEqual(3 * MiB)

    // With the destination back, reading waits for landings and goes on after each: every row once.
    const rerun = await sync(env)
    expect(rerun.stderr).toBe('')
    expect(rerun.code).toBe(0)
    expect(await landed()).toMatchObject({ rows: ROWS, unique: ROWS, highest: ROWS })
  })
})

describe('a full disk (DATA_DIR on a small tmpfs)', { timeout: 60_000 }, () => {
  it.skipIf(optedOut)(
    'stops reading, lands every committed batch once and exits 1 with one line; with room again a rerun lands the rest',
    async () => {
      mountTmpfs(dataDir, '8m')
      mounted = true
      await p.write('skippr.yml', bikehireConfig({ ...SOURCE, extra: SMALL_BATCHES.join('\n') }))
      const lock = await lockWarehouse()
      running = spawnCli(syncArgs, { cwd: p.dir, env: { DATA_DIR: dataDir, ...FILES } })
      const result = collect(running)
      try {
        // Reading stops when the disk is full; the committed batches then wait for the destination.
        await untilLogged('the disk is full: reading stopped', result)
      } finally {
        lock.release()
      }
      const full = await result
      expect(full.code).toBe(1)
      const line = onlyLine(full)
      const message = new RegExp(
        `^\\[skippr\\] sync failed: pipeline 'bikehire': the disk holding ${regexEscape(dataDir)} is full: .+ kept free for landing\\); reading stopped at the last committed batch\\. .*run sync again — the (\\d+) committed batches landed$`,
      ).exec(line)
      expect(message, line).not.toBeNull()
      // Every committed batch landed once, and the next run resumes right after the last of them.
      const first = await landed()
      expect(first.batches).toBe(Number(message![1]))
      expect(first.rows).toBeGreaterThan(0)
      expect(first.rows).toBeLessThan(ROWS)
      expect(first).toMatchObject({ unique: first.rows, highest: first.rows })
      expect(await resumeRow()).toBe(first.rows)

      execFileSync('mount', ['-o', 'remount,size=64m', dataDir])
      const rerun = await sync(FILES)
      expect(rerun.stderr).toBe('')
      expect(rerun.code).toBe(0)
      expect(rerun.stdout).toContain(`rows=${ROWS - first.rows} `)
      expect(await landed()).toMatchObject({ rows: ROWS, unique: ROWS, highest: ROWS })
    },
  )
})

describe('a disk another program filled (DATA_DIR on a small tmpfs)', { timeout: 60_000 }, () => {
  it.skipIf(optedOut)(
    'a sync still opens and lands the backlog, then says the disk is full; with room again the rest lands',
    async () => {
      mountTmpfs(dataDir, '8m')
      mounted = true
      await p.write('skippr.yml', bikehireConfig({ ...SOURCE, extra: SMALL_BATCHES.join('\n') }))
      // A backlog: the disk filled while the destination could not land, and the budget ran out.
      const lock = await lockWarehouse()
      let first: CliResult
      try {
        first = await sync({ ...FILES, SKIPPR_RETRY_BUDGET_SECONDS: '1' })
      } finally {
        lock.release()
      }
      expect(onlyLine(first)).toMatch(
        /is full: .* — 0 committed batches landed; .* could not land within 1 s/,
      )
      const backlog = await resumeRow()
      expect(backlog).toBeGreaterThan(0)
      // Another program takes all but the last blocks.
      fill(path.join(dataDir, 'other-program'), 64 * 1024)

      const drained = await sync(FILES)
      expect(drained.code).toBe(1)
      expect(onlyLine(drained)).toMatch(
        new RegExp(
          `^\\[skippr\\] sync failed: pipeline 'bikehire': the disk holding ${regexEscape(dataDir)} is full: .* — the \\d+ committed batches landed$`,
        ),
      )
      expect(await landed()).toMatchObject({ rows: backlog, unique: backlog, highest: backlog })

      await rm(path.join(dataDir, 'other-program'))
      const rerun = await sync(FILES)
      expect(rerun.stderr).toBe('')
      expect(rerun.code).toBe(0)
      expect(await landed()).toMatchObject({ rows: ROWS, unique: ROWS, highest: ROWS })
    },
  )
})

/** Writes `file` until the disk holding it has `leave` bytes free (or fewer). */
function fill(file: string, leave: number): void {
  const free = () => {
    const s = statfsSync(path.dirname(file))
    return s.bavail * s.bsize
  }
  const block = Buffer.alloc(4096)
  const fd = openSync(file, 'w')
  try {
    while (free() > leave) writeSync(fd, block)
  } finally {
    closeSync(fd)
  }
}

function mountTmpfs(dir: string, size: string): void {
  if (process.getuid?.() !== 0) {
    throw new Error(
      'needs root to mount a tmpfs as DATA_DIR: run the tests as root (the CI does), or set ' +
        'SKIPPR_TEST_NO_TMPFS=1 to leave the full-disk test out',
    )
  }
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir])
}

function unmount(dir: string): void {
  try {
    execFileSync('umount', [dir])
  } catch {
    // Still busy (a child not reaped yet): detach it now, it goes once the last file closes.
    execFileSync('umount', ['-l', dir])
  }
}

/** The child's exit code and output. */
function collect(child: ReturnType<typeof spawnCli>): Promise<CliResult> {
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (data: Buffer) => (stdout += data))
  child.stderr?.on('data', (data: Buffer) => (stderr += data))
  return new Promise((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  )
}

/** Resolves once the sync's log file under DATA_DIR holds `text`; fails if the sync exits first. */
async function untilLogged(text: string, exit: Promise<CliResult>): Promise<void> {
  let exited: CliResult | undefined
  void exit.then((result) => (exited = result))
  const logs = path.join(dataDir, 'logs')
  for (;;) {
    const files = await readdir(logs).catch(() => [])
    for (const file of files) if ((await readFile(path.join(logs, file), 'utf8')).includes(text)) return
    if (exited) throw new Error(`the sync exited (${exited.code}) before logging "${text}": ${exited.stderr}`)
    await sleep(50)
  }
}

function regexEscape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
