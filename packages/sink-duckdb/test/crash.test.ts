/**
 * SIGKILL at random moments while batches land, then restart from the last acknowledged batch (as
 * the runner does from its WAL): every row must be there exactly once. Rounds: SKIPPR_CRASH_ROUNDS.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, expect, it } from 'vitest'
import { DuckdbSink } from '../src/index.js'
import { query, tempWarehouse } from './helpers.js'

const ROUNDS = Number(process.env.SKIPPR_CRASH_ROUNDS ?? 3)
const BATCHES = 30
const PER_BATCH = 2_000
const fixture = path.join(import.meta.dirname, 'fixtures', 'write-batches.mjs')
const warehouse = await tempWarehouse()
afterAll(() => rm(warehouse.dir, { recursive: true, force: true }))

/**
 * Runs the writer from `from`; kills it `killAfterMs` after it is ready unless it finishes first.
 * Returns the last acknowledged seq and whether it died by SIGKILL.
 */
async function runWriter(
  from: number,
  killAfterMs: number | undefined,
): Promise<{ acked: number; killed: boolean }> {
  const child = spawn(
    process.execPath,
    [fixture, warehouse.file, String(from), String(BATCHES), String(PER_BATCH)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  let acked = from - 1
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  )
  for await (const line of createInterface({ input: child.stdout })) {
    if (line === 'ready' && killAfterMs !== undefined) setTimeout(() => child.kill('SIGKILL'), killAfterMs)
    const [status, seq] = line.split(' ')
    if (status === 'landed' || status === 'already-landed') acked = Number(seq)
    else if (line !== 'ready') throw new Error(`writer: ${line}`)
  }
  return { acked, killed: (await exited) === 'SIGKILL' }
}

it(`every row exactly once after ${ROUNDS} SIGKILLs during loads`, {
  timeout: 30_000 + ROUNDS * 10_000,
}, async () => {
  let acked = 0
  let kills = 0
  for (let round = 0; round < ROUNDS && acked < BATCHES; round++) {
    const run = await runWriter(acked + 1, Math.floor(Math.random() * 300))
    acked = run.acked
    if (run.killed) kills++
  }
  expect(kills).toBeGreaterThan(0)
  const last = await runWriter(acked + 1, undefined)
  expect(last).toEqual({ acked: BATCHES, killed: false })
  const [counts] = await query(
    warehouse.file,
    'SELECT count(*) AS n, count(DISTINCT id) AS ids FROM main.crash',
  )
  expect(counts).toEqual({ n: BigInt(BATCHES * PER_BATCH), ids: BigInt(BATCHES * PER_BATCH) })
  const [markers] = await query(warehouse.file, 'SELECT count(*) AS n FROM main._skippr_batches')
  expect(markers).toEqual({ n: BigInt(BATCHES) })
})

/**
 * What a SIGKILL during a first open's create left: DuckDB makes the file, then writes its headers,
 * and a chaos run was killed in between (an empty warehouse.duckdb that DuckDB refused for ever).
 * The sink now creates the file under a temporary name and links it into place; a temporary file of
 * a dead process is removed, and an empty file at the final name (left before) is made anew.
 */
it('an empty file a killed first open left, and its temporary file, do not stop the next open', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'skippr-duckdb-create-'))
  try {
    await writeFile(path.join(dir, 'warehouse.duckdb'), '')
    await writeFile(path.join(dir, 'warehouse.duckdb.creating-999999999'), '')
    const sink = new DuckdbSink(
      { path: 'warehouse.duckdb', schema: 'main' },
      { configDir: dir, dataDir: path.join(dir, 'data') },
    )
    await sink.prepare({ namespace: 'rows', fields: [{ name: 'id', type: 'long' }] })
    await sink.close()
    expect((await readdir(dir)).filter((name) => name.startsWith('warehouse.duckdb')).sort()).toEqual([
      'warehouse.duckdb',
    ])
    expect(
      await query(path.join(dir, 'warehouse.duckdb'), 'SELECT count(*)::INT AS n FROM main.rows'),
    ).toEqual([{ n: 0 }])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
