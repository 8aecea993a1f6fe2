/** Recovery as a user meets it: a sync killed with SIGKILL, chaos mode, a long-running sync stopped with SIGTERM. */
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { exited, runCli, spawnCli } from './support/cli.js'
import { rentalCounts } from './support/duckdb.js'
import { bikehireConfig, type Project, project } from './support/project.js'

const ROWS = 20_000
/** Kill rounds of the crash test; the chaos harness (tools/chaos) runs hundreds. */
const KILLS = Number(process.env.SKIPPR_TEST_KILLS ?? 3)
/**
 * 1,000-row batches, enough that every run is still landing when it is killed, however fast: a run
 * lands about 25,000 rows here before its kill, so 70,000 a kill leaves room (200,000 at least).
 */
const CRASH_ROWS = Math.max(200_000, 70_000 * KILLS)

let p: Project
beforeEach(async () => {
  p = await project(bikehireConfig({ rows: ROWS }))
})
afterEach(async () => {
  await p.remove()
})

const warehouse = () => path.join(p.dir, 'warehouse.duckdb')
const syncOnce = (args: string[] = [], env: Record<string, string> = {}) =>
  runCli(['sync', '--pipeline', 'bikehire', '--once', ...args], { cwd: p.dir, env })

describe('crash recovery', () => {
  it(`a sync killed with SIGKILL ${KILLS} times, then rerun, lands every row exactly once`, async () => {
    // A killed sync's lease expires after its TTL: keep it short so the next run need not wait 30 s.
    const env = { BUFFER_THRESHOLD_BYTES: '50000', SKIPPR_LEASE_TTL_SECONDS: '1' }
    // Chunks of 1,000 rows, each its own batch, so each kill lands between two.
    await p.write('skippr.yml', bikehireConfig({ rows: CRASH_ROWS, batchRows: 1000 }))
    for (let kill = 0; kill < KILLS; kill++) {
      const child = spawnCli(
        ['sync', '--pipeline', 'bikehire', '--once', '--output', 'text', '--log', 'debug'],
        {
          cwd: p.dir,
          env,
        },
      )
      // Once this run has landed a batch (so every run makes progress), at a random moment after.
      let stderr = ''
      await new Promise<void>((resolve) => {
        child.stderr?.on('data', (d: Buffer) => {
          stderr += d.toString()
          if (stderr.includes('"msg":"batch landed"')) resolve()
        })
        child.once('exit', () => resolve())
      })
      await sleep(Math.random() * 150)
      child.kill('SIGKILL')
      expect(await exited(child)).toEqual({ code: null, signal: 'SIGKILL' })
    }
    const last = await syncOnce(['--output', 'text'], env)
    expect(last.code).toBe(0)
    expect(await rentalCounts(warehouse())).toEqual({ rows: CRASH_ROWS, unique: CRASH_ROWS })
  })

  it('chaos mode kills the process at a sync point, logging the line first; reruns recover', async () => {
    // One batch per 10,000-row sample chunk: two batches.
    const lease = { SKIPPR_LEASE_TTL_SECONDS: '1', BUFFER_THRESHOLD_BYTES: '500000' }
    const chaos = {
      ...lease,
      SKIPPR_CHAOS_MODE: 'yes',
      SKIPPR_CHAOS_PROBABILITY: '1',
      SKIPPR_CHAOS_POINTS: 'after-land',
    }
    const killed = await syncOnce(['--output', 'text'], chaos)
    expect(killed.signal).toBe('SIGKILL')
    expect(killed.stderr).toMatch(
      /^\[skippr\] chaos mode: killing the process with SIGKILL at after-land \(bikehire\/[0-9a-f]+\/\d+\)\n$/,
    )
    expect(await p.logs()).toContain('chaos mode: killing the process with SIGKILL at after-land')
    // The first batch (and, when the two landed together, the second) landed but was not marked
    // landed: the next run must recognise what landed and land only the rest.
    const landedBefore = (await rentalCounts(warehouse())).rows
    expect([10_000, ROWS]).toContain(landedBefore)
    const recovered = await syncOnce(['--output', 'text'], lease)
    expect(recovered.code).toBe(0)
    expect(recovered.stdout).toMatch(new RegExp(`rows=${ROWS - landedBefore} elapsed=`))
    expect(await rentalCounts(warehouse())).toEqual({ rows: ROWS, unique: ROWS })
  })
})

describe('without --once', () => {
  it('runs until SIGTERM holding the writer lease, then stops cleanly; a second sync is refused meanwhile', async () => {
    const env = { BUFFER_THRESHOLD_BYTES: '500000' }
    const service = spawnCli(['sync', '--pipeline', 'bikehire', '--output', 'text'], { cwd: p.dir, env })
    let stdout = ''
    service.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString()
    })
    while (!stdout.includes('[start] Ingesting')) await sleep(50)
    const second = await syncOnce(['--output', 'text'], { SKIPPR_LEASE_WAIT_SECONDS: '1' })
    expect(second.code).toBe(1)
    expect(second.stderr).toMatch(
      /^\[skippr\] sync failed: pipeline writer lease unavailable: pipeline 'bikehire' is held by 'skipprd [^']+:\d+:[0-9a-f]+' .*Another sync is writing this pipeline: let it finish or stop it\n$/,
    )
    service.kill('SIGTERM')
    expect(await exited(service)).toEqual({ code: 0, signal: null })
    expect(stdout).toMatch(
      /\[start\] Finalising\n\[done\] {2}Finalising\nSync complete: pipeline=bikehire namespaces=1 rows=\d+ elapsed=\d+ms\n$/,
    )
    // Whatever the service had not landed yet is in the WAL: the next run lands it.
    expect((await syncOnce(['--output', 'text'])).code).toBe(0)
    expect(await rentalCounts(warehouse())).toEqual({ rows: ROWS, unique: ROWS })
  })
})
