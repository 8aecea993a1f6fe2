/**
 * A host you can throw away, through the CLI: the WAL in S3 (s3rver) and the state in DynamoDB
 * (dynalite), started here. Each run gets a fresh, empty DATA_DIR — a new host — and still every
 * row lands exactly once, and batches committed on a lost host are seen and landed from another.
 */
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { DuckDBInstance } from '@duckdb/node-api'
import { openStateStore } from '@skippr/state'
import { dynamoDbStore } from '@skippr/state-dynamodb'
import { type DynaliteServer, type S3Server, startDynalite, startS3rver } from '@skippr/test-servers'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { runCli, spawnCli } from './support/cli.js'
import { query, rentalCounts } from './support/duckdb.js'
import { bikehireConfig, type Project, project } from './support/project.js'

const ROWS = 1200
// biome-ignore lint/suspicious/noTemplateCurlyInString: a ${NAME} reference in the config, resolved by skipprd
const REFERENCE = '${WAREHOUSE_URL}'
/** What a sync that lost the pipeline to another says, whichever guard stopped it. */
const FENCED_OUT =
  /^\[skippr\] sync failed: (pipeline writer lease lost: pipeline 'bikehire' token 1 was taken over by |WAL s3:\/\/wal\/cli\/\S+: another sync opened this pipeline's WAL after this one|pipeline writer lease lost: pipeline 'bikehire' token 1 had no successful heartbeat for |write refused: fencing token 1 for pipeline 'bikehire' is stale )/

let s3: S3Server
let dynamo: DynaliteServer
beforeAll(async () => {
  ;[s3, dynamo] = await Promise.all([startS3rver(), startDynalite()])
  await s3.createBucket('wal')
})
afterAll(async () => {
  await Promise.all([s3?.stop(), dynamo?.stop()])
})

let p: Project
let hosts = 0
let table: string
beforeEach(async () => {
  p = await project()
  table = `skippr-${randomBytes(4).toString('hex')}`
})
afterEach(async () => {
  await p.remove()
})

/** The environment of a run on a new host: nothing of the last run's DATA_DIR is there. */
function newHost(extra: Record<string, string> = {}): Record<string, string> {
  hosts += 1
  return {
    DATA_DIR: path.join(p.dir, `host-${hosts}`),
    WAL_STORAGE: 's3',
    SKIPPR_WAL_S3_BUCKET: 'wal/cli',
    SKIPPR_STORE_TYPE: 'dynamodb',
    SKIPPR_STORE_NAME: table,
    AWS_REGION: s3.region,
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    AWS_ENDPOINT_URL_S3: s3.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    SKIPPR_RETRY_BUDGET_SECONDS: '600',
    ...extra,
  }
}

/** The pipeline's writer lease token in the run's state store (dynalite), as the syncs see it. */
async function leaseToken(name: string): Promise<bigint | undefined> {
  // The SDK takes the region and credentials from the environment, as skipprd does.
  Object.assign(process.env, {
    AWS_REGION: s3.region,
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
  })
  const store = await openStateStore({ type: dynamoDbStore, name, endpoint: dynamo.endpoint, dataDir: p.dir })
  try {
    return (await store.pipeline('bikehire').getLeaseInfo())?.token
  } finally {
    await store.close()
  }
}

const warehouse = () => path.join(p.dir, 'warehouse.duckdb')
const duckdbSink = () => `Duckdb: { path: "${warehouse()}" }`

function sync(env: Record<string, string>, flags: string[] = []) {
  return runCli(['sync', '-p', 'bikehire', '--once', '--output', 'text', ...flags], { cwd: p.dir, env })
}

describe('WAL_STORAGE=s3 with the dynamodb state store', () => {
  it('lands every row once, and a run on a new host resumes where the lost one stopped', async () => {
    await p.write('skippr.yml', bikehireConfig({ rows: ROWS, batchRows: 200, sink: duckdbSink() }))
    const first = await sync(newHost(), ['--create-store'])
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(await rentalCounts(warehouse())).toEqual({ rows: ROWS, unique: ROWS })

    // A new host, with more rows at the source: only those are read and landed.
    await p.write('skippr.yml', bikehireConfig({ rows: ROWS + 300, batchRows: 200, sink: duckdbSink() }))
    const again = await sync(newHost())
    expect(again.stderr).toBe('')
    expect(again.code).toBe(0)
    expect(await rentalCounts(warehouse())).toEqual({ rows: ROWS + 300, unique: ROWS + 300 })
  })

  it('lets a new host see, and then land, what a lost host committed but could not land', async () => {
    // The destination is held by another process (DuckDB has one writer): batches are committed
    // to the S3 WAL and stay there.
    await p.write('skippr.yml', bikehireConfig({ rows: ROWS, batchRows: 200, sink: duckdbSink() }))
    const holder = await DuckDBInstance.create(warehouse())
    const failed = await sync(newHost({ SKIPPR_RETRY_BUDGET_SECONDS: '1' }), ['--create-store'])
    holder.closeSync()
    expect(failed.code).toBe(1)

    // Another host reads the pending rows from the S3 WAL, taking no lease.
    const shown = await runCli(
      [
        'query',
        '--plain',
        '-s',
        'SELECT count(*) AS n, count(DISTINCT rental_id) AS u FROM bikehire.rentals',
      ],
      {
        cwd: p.dir,
        env: newHost(),
      },
    )
    expect(shown.stderr).toBe('')
    const [[n, u] = []] = (JSON.parse(shown.stdout) as { rows: string[][] }).rows.map((row) =>
      row.map(Number),
    )
    expect(n).toBeGreaterThan(0)
    expect(u).toBe(n)
    // SHOW PIPELINE and df, from yet another host, see the same pending batches.
    const show = await runCli(['query', '--plain', '-s', 'SHOW PIPELINE bikehire'], {
      cwd: p.dir,
      env: newHost(),
    })
    expect(show.stderr).toBe('')
    expect(JSON.parse(show.stdout)).toMatchObject({ wal: { pending_batches: expect.any(Number) } })
    expect(
      (JSON.parse(show.stdout) as { wal: { pending_batches: number } }).wal.pending_batches,
    ).toBeGreaterThan(0)
    const frame = await runCli(['df', '-p', 'bikehire', '--namespace', 'rentals'], {
      cwd: p.dir,
      env: newHost(),
    })
    expect(frame.stderr).toBe('')
    expect((JSON.parse(frame.stdout) as { rows: unknown[] }).rows).toHaveLength(n as number)

    // The destination is free again: everything lands once.
    const fixed = await sync(newHost())
    expect(fixed.stderr).toBe('')
    expect(fixed.code).toBe(0)
    expect(await rentalCounts(warehouse())).toEqual({ rows: ROWS, unique: ROWS })
    const [batches] = await query(warehouse(), 'SELECT count(*) AS n FROM main.rentals')
    expect(Number(batches?.n)).toBe(ROWS)
  })

  it('a missing table without --create-store: exit 1, one line naming the table and the fix', async () => {
    await p.write('skippr.yml', bikehireConfig({ rows: 10, sink: duckdbSink() }))
    const run = await sync(newHost())
    expect(run.code).toBe(1)
    const lines = run.stderr.trimEnd().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(table)
    expect(lines[0]).toContain('--create-store')
    expect(run.stderr).not.toContain(s3.secretAccessKey)
  })

  it('a missing WAL bucket: exit 1, one line naming it', async () => {
    await p.write('skippr.yml', bikehireConfig({ rows: 10, sink: duckdbSink() }))
    const run = await sync(newHost({ SKIPPR_WAL_S3_BUCKET: 'no-such-bucket' }), ['--create-store'])
    expect(run.code).toBe(1)
    const lines = run.stderr.trimEnd().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/s3:\/\/no-such-bucket.*the bucket does not exist/)
  })

  it('fences out a sync paused past its lease: the one that took over lands everything once', async () => {
    const url = process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
    const schema = `skippr_zombie_${randomBytes(5).toString('hex')}`
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    try {
      // Enough that A is stopped in the middle of its run, not at its end.
      const rows = 300_000
      const sink = `Postgres: { connection_string: "${REFERENCE}", schema: ${schema} }`
      await p.write('skippr.yml', bikehireConfig({ rows, batchRows: 500, sink }))
      const lease = { SKIPPR_LEASE_TTL_SECONDS: '1', SKIPPR_LEASE_WAIT_SECONDS: '20', WAREHOUSE_URL: url }
      const count = async () => {
        const found = await admin
          .query(`SELECT count(*)::int AS n FROM "${schema}".rentals`)
          .catch(() => undefined)
        return found?.rows[0].n ?? 0
      }
      // A lands for a while, then is frozen in the middle of its run.
      const a = spawnCli(['sync', '-p', 'bikehire', '--once', '--output', 'json', '--create-store'], {
        cwd: p.dir,
        env: newHost(lease),
      })
      let stderrA = ''
      a.stderr?.on('data', (chunk: Buffer) => {
        stderrA += chunk.toString()
      })
      const exitedA = new Promise<number | null>((resolve) => a.on('exit', (code) => resolve(code)))
      await expect
        .poll(async () => (a.exitCode === null ? count() : `A exited: ${stderrA}`), {
          timeout: 30_000,
          interval: 20,
        })
        .toBeGreaterThan(0)
      a.kill('SIGSTOP')
      expect(await count()).toBeLessThan(rows)
      await sleep(1_500)

      // B, on another host, waits out A's lease and takes the WAL over. A stopped inside a
      // transaction holds its locks until it runs again, as a paused process would: B may wait on
      // them, so A is woken while B runs.
      const b = sync(newHost(lease))
      // Woken only once B holds the lease (its token, 2, is in the store): on a loaded machine B
      // may take seconds to start, and A, woken before, would rightly go on as the writer nobody
      // replaced.
      await expect.poll(() => leaseToken(table), { timeout: 60_000, interval: 100 }).toBe(2n)
      a.kill('SIGCONT')
      // A finds its lease gone and stops: whatever it does from there is fenced out.
      expect(await exitedA).not.toBe(0)
      // Which guard stops it first depends on where it was: the lease (taken over, or its own
      // heartbeat too long ago), the WAL's record, or the fence check. Each says it lost the pipeline.
      expect(stderrA.trimEnd().split('\n')).toHaveLength(1)
      expect(stderrA).toMatch(FENCED_OUT)
      const landedByB = await b
      expect(landedByB.stderr).toBe('')
      expect(landedByB.code).toBe(0)
      const after = await admin.query(
        `SELECT count(*)::int AS n, count(DISTINCT rental_id)::int AS u FROM "${schema}".rentals`,
      )
      expect(after.rows[0]).toEqual({ n: rows, u: rows })
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await admin.end()
    }
  }, 240_000)
})
