/**
 * `skipprd query` over a pipeline whose data_sink is DuckDB, through the built CLI: the landed table
 * and the rows still pending in the WAL, each batch counted once. Pending rows are made by a real
 * sync that chaos mode kills after a commit (committed, not landed) or after a landing (landed, not
 * yet marked landed in the WAL).
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { DuckDBInstance } from '@duckdb/node-api'
import { afterAll, describe, expect, it } from 'vitest'
import { exited, runCli, spawnCli } from './support/cli.js'
import { rentalCounts } from './support/duckdb.js'
import { bikehireConfig, type Project, project } from './support/project.js'
import { schema, seedWal } from './support/query-fixtures.js'

const made: Project[] = []
afterAll(async () => {
  for (const p of made) await p.remove()
})

/** The first sync lands LANDED rows; raising the Sample's rows gives the next sync PENDING more. */
const LANDED = 1000
const PENDING = 500
/** A killed sync's writer lease expires soon, so the next sync need not wait for it. */
const LEASE = { SKIPPR_LEASE_TTL_SECONDS: '1' }
const COUNTS =
  'SELECT count(*) AS n, count(DISTINCT rental_id) AS ids, max(rental_id) - min(rental_id) + 1 AS span FROM bikehire.rentals'

const warehouse = (p: Project) => path.join(p.dir, 'warehouse.duckdb')
const syncOnce = (p: Project, env: Record<string, string> = {}) =>
  runCli(['sync', '--pipeline', 'bikehire', '--once', '--output', 'text'], { cwd: p.dir, env })
const queryPlain = (p: Project, sql: string) => runCli(['query', '--plain', '-s', sql], { cwd: p.dir })
const rowsOf = (stdout: string) => (JSON.parse(stdout) as { rows: string[][] }).rows

/** A project whose warehouse holds LANDED rows, then PENDING more committed by a sync killed at `point`. */
async function landedThenKilled(point: 'after-commit' | 'after-land', byHand?: string): Promise<Project> {
  const p = await project(bikehireConfig({ rows: LANDED }))
  made.push(p)
  expect((await syncOnce(p)).code).toBe(0)
  if (byHand !== undefined) await write(warehouse(p), byHand)
  await p.write('skippr.yml', bikehireConfig({ rows: LANDED + PENDING }))
  const killed = await syncOnce(p, {
    ...LEASE,
    SKIPPR_CHAOS_MODE: 'yes',
    SKIPPR_CHAOS_PROBABILITY: '1',
    SKIPPR_CHAOS_POINTS: point,
  })
  expect(killed.signal).toBe('SIGKILL')
  expect(killed.stderr).toContain(`chaos mode: killing the process with SIGKILL at ${point}`)
  return p
}

describe.concurrent('skipprd query over a DuckDB data_sink', { timeout: 120_000 }, () => {
  it('shows the landed rows and the rows still in the WAL, each once', async () => {
    const p = await landedThenKilled('after-commit')
    expect(await rentalCounts(warehouse(p))).toEqual({ rows: LANDED, unique: LANDED })
    const result = await queryPlain(p, COUNTS)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const all = `${LANDED + PENDING}`
    expect(rowsOf(result.stdout)).toEqual([[all, all, all]])
  })

  it('counts a batch landed but not yet marked landed in the WAL once', async () => {
    const p = await landedThenKilled('after-land')
    // The killed sync landed its batch: the warehouse has every row, and the WAL still has the batch.
    expect(await rentalCounts(warehouse(p))).toEqual({ rows: LANDED + PENDING, unique: LANDED + PENDING })
    const shown = JSON.parse((await queryPlain(p, 'SHOW PIPELINE bikehire')).stdout) as { wal: unknown }
    expect(shown.wal).toMatchObject({ pending_batches: 1, pending: [{ rows: PENDING }] })
    const result = await queryPlain(p, COUNTS)
    expect(result.stderr).toBe('')
    const all = `${LANDED + PENDING}`
    expect(rowsOf(result.stdout)).toEqual([[all, all, all]])
  })

  it('lines columns up by name: a column only the landed table has, and one it lacks', async () => {
    const p = await landedThenKilled(
      'after-commit',
      "ALTER TABLE main.rentals ADD COLUMN note VARCHAR DEFAULT 'by hand'; ALTER TABLE main.rentals DROP COLUMN member_type",
    )
    const result = await queryPlain(
      p,
      'SELECT count(*), count(note), count(member_type), count(distance_km) FROM bikehire.rentals;' +
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'bikehire' AND table_name = 'rentals' ORDER BY ordinal_position",
    )
    expect(result.stderr).toBe('')
    const [counts, columns] = result.stdout.trim().split('\n').map(rowsOf)
    expect(counts).toEqual([[`${LANDED + PENDING}`, `${LANDED}`, `${PENDING}`, `${LANDED + PENDING}`]])
    // The saved schema's columns first, as for a pipeline without a destination, then the table's own.
    expect(columns?.flat()).toEqual([
      'rental_id',
      'bike_id',
      'start_station',
      'end_station',
      'start_time',
      'end_time',
      'duration_s',
      'member_type',
      'distance_km',
      'note',
    ])
  })

  it('shows a namespace the warehouse has no table for yet from the WAL alone', async () => {
    const p = await landedThenKilled('after-commit')
    const returns = schema('returns', [{ name: 'rental_id', type: 'long' }])
    await seedWal(path.join(p.dir, 'data'), 'bikehire', [
      [{ schema: returns, format: 'csv', lines: ['1', '2', '3'] }],
    ])
    const result = await queryPlain(
      p,
      'SELECT (SELECT count(*) FROM bikehire.rentals), (SELECT count(*) FROM bikehire.returns)',
    )
    expect(result.stderr).toBe('')
    expect(rowsOf(result.stdout)).toEqual([[`${LANDED + PENDING}`, '3']])
  })

  it('reads the WAL alone, creating nothing, before the warehouse file exists', async () => {
    const p = await project(
      bikehireConfig({ rows: LANDED, sink: 'Duckdb: { path: ./later/warehouse.duckdb }' }),
    )
    made.push(p)
    const items = schema('items', [{ name: 'n', type: 'int' }])
    await seedWal(path.join(p.dir, 'data'), 'bikehire', [
      [{ schema: items, format: 'csv', lines: ['1', '2'] }],
    ])
    const result = await queryPlain(p, 'SELECT sum(n) FROM bikehire.items')
    expect(result.stderr).toBe('')
    expect(rowsOf(result.stdout)).toEqual([['3']])
    expect(existsSync(path.join(p.dir, 'later'))).toBe(false)
  })

  it('while another process holds the warehouse: one notice line, and the rows still in the WAL', async () => {
    const p = await landedThenKilled('after-commit')
    const holder = holdFile(warehouse(p))
    try {
      await holder.ready
      const held = await queryPlain(p, COUNTS)
      expect(held.code).toBe(0)
      expect(held.stderr).toMatch(
        /^\[skippr\] pipeline 'bikehire': showing only its rows still in the WAL, not those landed: its DuckDB warehouse \S+warehouse\.duckdb cannot be opened \(.*lock.*\)\n$/,
      )
      expect(rowsOf(held.stdout)[0]?.[0]).toBe(`${PENDING}`)
    } finally {
      holder.child.kill('SIGKILL')
      await exited(holder.child)
    }
    const freed = await queryPlain(p, COUNTS)
    expect(freed.stderr).toBe('')
    expect(rowsOf(freed.stdout)[0]?.[0]).toBe(`${LANDED + PENDING}`)
  })

  it('the prompt lets the warehouse go after each statement, so a sync lands meanwhile', async () => {
    const p = await landedThenKilled('after-commit')
    const prompt = spawnCli(['query', '--plain'], { cwd: p.dir })
    let stderr = ''
    prompt.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
    const answers = lines(prompt.stdout!)
    const ask = async () => {
      prompt.stdin?.write(`${COUNTS};\n`)
      return rowsOf(await answers.next())[0]?.[0]
    }
    try {
      expect(await ask()).toBe(`${LANDED + PENDING}`)
      // The sync would fail within its retry budget if the prompt still held the file.
      const sync = await syncOnce(p, { SKIPPR_RETRY_BUDGET_SECONDS: '3' })
      expect(sync.stderr).toBe('')
      expect(sync.code).toBe(0)
      expect(sync.stdout).toMatch(new RegExp(`rows=${PENDING} `))
      expect(await ask()).toBe(`${LANDED + PENDING}`)
    } finally {
      prompt.stdin?.end()
      await exited(prompt)
    }
    expect(stderr).toBe('')
    expect(await rentalCounts(warehouse(p))).toEqual({ rows: LANDED + PENDING, unique: LANDED + PENDING })
  })
})

/** Runs `sql` on the warehouse read-write, as someone changing the table by hand (no sync running). */
async function write(file: string, sql: string): Promise<void> {
  const instance = await DuckDBInstance.create(file)
  try {
    const conn = await instance.connect()
    await conn.run(sql)
    conn.closeSync()
  } finally {
    instance.closeSync()
  }
}

/** Another process holding the DuckDB file open (and so its lock) until killed. */
function holdFile(file: string) {
  const api = pathToFileURL(createRequire(import.meta.url).resolve('@duckdb/node-api')).href
  const script = [
    `const { DuckDBInstance } = await import(${JSON.stringify(api)})`,
    `const instance = await DuckDBInstance.create(${JSON.stringify(file)})`,
    'await instance.connect()',
    "process.stdout.write('holding\\n')",
    'setInterval(() => {}, 1000)',
  ].join('\n')
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', () => resolve())
    child.once('exit', (code) => reject(new Error(`the holder exited with ${code}`)))
  })
  return { child, ready }
}

/** Reads a stream line by line; a line asked for after the stream ended is an error, not a wait. */
function lines(stream: NodeJS.ReadableStream): { next(): Promise<string> } {
  let buffered = ''
  let ended = false
  const waiting: { resolve: (line: string) => void; reject: (error: Error) => void }[] = []
  const ready: string[] = []
  const gone = () => new Error('the stream ended before the line')
  stream.on('data', (d: Buffer) => {
    buffered += d.toString()
    for (let at = buffered.indexOf('\n'); at !== -1; at = buffered.indexOf('\n')) {
      const line = buffered.slice(0, at)
      buffered = buffered.slice(at + 1)
      const waiter = waiting.shift()
      if (waiter) waiter.resolve(line)
      else ready.push(line)
    }
  })
  stream.on('end', () => {
    ended = true
    for (const waiter of waiting.splice(0)) waiter.reject(gone())
  })
  return {
    next: () => {
      const line = ready.shift()
      if (line !== undefined) return Promise.resolve(line)
      if (ended) return Promise.reject(gone())
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }))
    },
  }
}
