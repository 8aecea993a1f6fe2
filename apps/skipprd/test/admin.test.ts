/**
 * The admin statements, each followed by the `sync` it is meant to steer: the built CLI in a
 * project whose pipeline reads the Sample source and keeps its data in the WAL. One synced
 * project is made first and copied for each test that starts from synced data.
 */
import { cp } from 'node:fs/promises'
import path from 'node:path'
import { openStateStore } from '@skippr/state'
import { openWal } from '@skippr/wal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { type Project, project } from './support/project.js'
import { walOnlyConfig } from './support/query-fixtures.js'

const ROWS = 1000
let synced: Project
const made: Project[] = []

beforeAll(async () => {
  synced = await project(walOnlyConfig(['bikehire'], ROWS))
  const result = await sync(synced)
  expect(result.stdout).toContain(`rows=${ROWS}`)
}, 60_000)
afterAll(async () => {
  for (const p of [synced, ...made]) await p.remove()
})

/** A project of its own: empty, or a copy of the synced one. */
async function open(from: 'empty' | 'synced'): Promise<Project> {
  const p = await project(walOnlyConfig(['bikehire'], ROWS))
  made.push(p)
  if (from === 'synced')
    await cp(path.join(synced.dir, 'data'), path.join(p.dir, 'data'), { recursive: true })
  return p
}

const query = (p: Project, sql: string) => runCli(['query', '--plain', '-s', sql], { cwd: p.dir })
const sync = (p: Project, output = 'text') =>
  runCli(['sync', '-p', 'bikehire', '--once', '--output', output], { cwd: p.dir })
const COUNT = 'SELECT count(*), count(DISTINCT rental_id) FROM bikehire.rentals'

/** Each statement's output: a JSON document or table, or an admin message. */
async function statements(p: Project, sql: string): Promise<unknown[]> {
  const result = await query(p, sql)
  expect(result.stderr).toBe('')
  return result.stdout
    .trim()
    .split('\n')
    .map((line) => (line.startsWith('{') ? JSON.parse(line) : line))
}

/** [count, distinct rental ids] from a COUNT result (duplicates would show as a difference). */
const counted = (table: unknown) => (table as { rows: string[][] }).rows[0]!.map(Number)

// Each test has its own project; they run side by side (each mostly waits on child processes).
describe.concurrent('admin statements', { timeout: 120_000 }, () => {
  it('DISABLE PIPELINE makes sync skip the pipeline; ENABLE PIPELINE lets it run again', async () => {
    const p = await open('empty')
    expect(await statements(p, 'disable Pipeline bikehire')).toEqual([
      "Pipeline 'bikehire' disabled: sync skips it until ENABLE PIPELINE bikehire.",
    ])
    const skipped = await sync(p)
    expect(skipped.code).toBe(0)
    expect(skipped.stdout).toContain("Pipeline 'bikehire' disabled, skipping.")
    const [shown, enabled] = await statements(p, 'SHOW PIPELINE bikehire; ENABLE PIPELINE bikehire')
    expect(shown).toMatchObject({ status: 'disabled', namespaces: [], wal: { pending_batches: 0 } })
    expect(enabled).toBe("Pipeline 'bikehire' enabled.")
    expect((await sync(p)).stdout).toContain(`Sync complete: pipeline=bikehire namespaces=1 rows=${ROWS}`)
    expect(counted((await statements(p, COUNT))[0])).toEqual([ROWS, ROWS])
  })

  it('RESET PIPELINE deletes the WAL and the resume position: the next sync reads the source from the start', async () => {
    const p = await open('synced')
    expect((await sync(p)).stdout).toContain('Sync complete: pipeline=bikehire namespaces=1 rows=0')
    const [before, reset, after, count] = await statements(
      p,
      `SHOW PIPELINE bikehire; RESET PIPELINE bikehire; SHOW PIPELINE bikehire; ${COUNT}`,
    )
    expect(before).toMatchObject({ offsets: { committed: { row: ROWS } } })
    expect(reset).toBe(
      "Pipeline 'bikehire' reset: its WAL and resume position are deleted; the next sync reads the source from the start.",
    )
    expect(after).toMatchObject({ offsets: { committed: null, landed: null }, wal: { pending_batches: 0 } })
    expect((after as { wal: { epoch: string } }).wal.epoch).not.toBe(
      (before as { wal: { epoch: string } }).wal.epoch,
    )
    // The saved schema stays: the table is there, empty.
    expect(counted(count)).toEqual([0, 0])

    expect((await sync(p)).stdout).toContain(`rows=${ROWS}`)
    expect(counted((await statements(p, COUNT))[0])).toEqual([ROWS, ROWS])
  })

  it('DROP PIPELINE also forgets the saved schema: the next sync discovers it again', async () => {
    const p = await open('synced')
    const dropped = await query(p, `drop pipeline "bikehire"; SHOW PIPELINE bikehire; ${COUNT}`)
    const [message, shown] = dropped.stdout.trim().split('\n')
    expect(message).toBe(
      "Pipeline 'bikehire' dropped: its WAL, resume position, saved schemas and flags are deleted.",
    )
    expect(JSON.parse(shown!)).toMatchObject({
      namespaces: [],
      offsets: { committed: null },
      wal: { pending_batches: 0 },
    })
    expect(dropped.code).toBe(1)
    expect(dropped.stderr).toContain('Table with name rentals does not exist')

    const events = (await sync(p, 'json')).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string })
    expect(events.map((e) => e.event)).toContain('namespace_discovered')
    expect(counted((await statements(p, COUNT))[0])).toEqual([ROWS, ROWS])
  })

  it('refuses RESET and DROP while a writer holds the lease, and touches nothing', async () => {
    const p = await open('synced')
    const store = await openStateStore({ dataDir: path.join(p.dir, 'data') })
    const lease = await store
      .pipeline('bikehire')
      .acquireLease({ owner: 'test-writer:42', heartbeatIntervalMs: 0 })
    try {
      for (const statement of ['RESET PIPELINE bikehire', 'DROP PIPELINE bikehire']) {
        const refused = await query(p, statement)
        expect(refused.code).toBe(1)
        expect(refused.stderr).toMatch(
          new RegExp(
            `^\\[skippr\\] query failed: ${statement} refused: a sync is writing pipeline 'bikehire' \\(writer lease held by 'test-writer:42', last heartbeat \\d+ ms ago\\)\\. Stop that sync or let it finish`,
          ),
        )
      }
      const [shown, count] = await statements(p, `SHOW PIPELINE bikehire; ${COUNT}`)
      expect(shown).toMatchObject({
        running: true,
        writer: { owner: 'test-writer:42' },
        namespaces: [{ namespace: 'rentals' }],
      })
      expect(counted(count)).toEqual([ROWS, ROWS])
      await lease.assertHeld()
    } finally {
      await lease.release()
      await store.close()
    }
    const [, count] = await statements(p, `RESET PIPELINE bikehire; ${COUNT}`)
    expect(counted(count)).toEqual([0, 0])
  })

  it('SHOW STATS reports committed and pending rows and bytes per namespace, as the WAL holds them', async () => {
    const p = await open('synced')
    const expected = await pendingByWriter(path.join(p.dir, 'data'))
    expect(expected.rows).toBe(ROWS)
    const stats = await query(
      p,
      'SHOW STATS FOR bikehire; show stats for bikehire.rentals; SHOW STATS FOR bikehire.trips',
    )
    const [all, one] = stats.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { header: string[]; rows: string[][] })
    expect(all).toEqual({
      header: [
        'namespace',
        'rows_committed',
        'bytes_committed',
        'rows_landed',
        'bytes_landed',
        'rows_pending',
        'bytes_pending',
        'rows_deadlettered',
      ],
      // This pipeline has no data_sink: everything committed is still pending, nothing landed.
      rows: [
        [
          'rentals',
          String(ROWS),
          String(expected.bytes),
          '0',
          '0',
          String(ROWS),
          String(expected.bytes),
          '0',
        ],
      ],
    })
    expect(one).toEqual(all)
    expect(stats.code).toBe(1)
    expect(stats.stderr).toContain(
      "Namespace 'trips' not found in pipeline 'bikehire': its namespaces: rentals",
    )
  })
})

/** Rows and bytes pending, as the writer's own reader (`Wal.pending()`, under the slot lock) sees them. */
async function pendingByWriter(dataDir: string): Promise<{ rows: number; bytes: number }> {
  const wal = await openWal({
    pipeline: 'bikehire',
    dataDir,
    positions: { load: async () => undefined, save: async () => {} },
  })
  let rows = 0
  let bytes = 0
  try {
    for await (const batch of wal.pending()) {
      for (const part of batch.parts) {
        rows += part.rows
        bytes += part.body.length
      }
    }
  } finally {
    await wal.close()
  }
  return { rows, bytes }
}
