/**
 * A fleet instead of a host: three `skipprd sync` processes in every-pipeline mode, each with its
 * own DATA_DIR (its own "host"), sharing the WAL in S3 (s3rver) and the state in DynamoDB
 * (dynalite). They divide twelve pipelines by lease, skipping what another holds; one is
 * SIGKILLed in the middle of a run, and the others take its pipelines over. Every pipeline's
 * rows land exactly once, and no pipeline ever runs in two processes at a time.
 */
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { type DynaliteServer, type S3Server, startDynalite, startS3rver } from '@skippr/test-servers'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { exited, spawnCli } from './support/cli.js'
import { rentalCounts } from './support/duckdb.js'
import { type Project, project } from './support/project.js'

const PIPELINES = Array.from({ length: 12 }, (_, i) => `p${String(i + 1).padStart(2, '0')}`)
const ROWS = 20_000

let s3: S3Server
let dynamo: DynaliteServer
let p: Project
beforeAll(async () => {
  ;[s3, dynamo] = await Promise.all([startS3rver(), startDynalite()])
  await s3.createBucket('fleet')
  p = await project(fleetConfig())
})
afterAll(async () => {
  await Promise.all([s3?.stop(), dynamo?.stop()])
  await p?.remove()
})

function fleetConfig(): string {
  return [
    'skippr:',
    `  store: { type: dynamodb, name: skippr-fleet-${randomBytes(4).toString('hex')}, create: true }`,
    'data_sources:',
    '  sample:',
    `    Sample: { dataset: bikehire, rows: ${ROWS}, batch_rows: 500 }`,
    'data_sinks:',
    ...PIPELINES.flatMap((name) => [`  ${name}:`, `    Duckdb: { path: ./${name}.duckdb }`]),
    'pipelines:',
    ...PIPELINES.flatMap((name) => [
      `  ${name}:`,
      '    data_source: data_sources.sample',
      `    data_sink: data_sinks.${name}`,
      '    sync_frequency_seconds: 1',
      '    buffer_threshold_bytes: 32768',
    ]),
    '',
  ].join('\n')
}

/** One process's events, as `--output json` prints them. */
interface Member {
  readonly name: string
  readonly child: ChildProcess
  readonly events: { event: string; pipeline: string; at: number }[]
  readonly exited: Promise<number | null>
}

function member(name: string): Member {
  const child = spawnCli(['sync', '--output', 'json'], {
    cwd: p.dir,
    env: {
      DATA_DIR: path.join(p.dir, `host-${name}`),
      WAL_STORAGE: 's3',
      SKIPPR_WAL_S3_BUCKET: 'fleet/wal',
      AWS_REGION: s3.region,
      AWS_ACCESS_KEY_ID: s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      SKIPPR_RECHECK_SECONDS: '1',
      SKIPPR_LEASE_TTL_SECONDS: '2',
    },
  })
  const events: Member['events'] = []
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const parsed = JSON.parse(line) as { event: string; pipeline: string }
    events.push({ event: parsed.event, pipeline: parsed.pipeline, at: performance.now() })
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { name, child, events, exited }
}

/** Each process's time holding each pipeline: from sync_start to its end (or to `killedAt`). */
function holdings(m: Member, killedAt?: number): { pipeline: string; from: number; to: number }[] {
  const open = new Map<string, number>()
  const held: { pipeline: string; from: number; to: number }[] = []
  for (const e of m.events) {
    if (e.event === 'sync_start') open.set(e.pipeline, e.at)
    else if (e.event === 'sync_complete' || e.event === 'sync_error') {
      held.push({ pipeline: e.pipeline, from: open.get(e.pipeline) ?? e.at, to: e.at })
      open.delete(e.pipeline)
    }
  }
  for (const [pipeline, from] of open) held.push({ pipeline, from, to: killedAt ?? Number.POSITIVE_INFINITY })
  return held
}

it('three processes divide twelve pipelines; one dies mid-run; every row lands once, never two at a time', async () => {
  const fleet = ['a', 'b', 'c'].map(member)
  const [a, b, c] = fleet as [Member, Member, Member]
  try {
    // C dies in the middle of a run: after it started one, before that one completed.
    await expect
      .poll(() => holdings(c).some((h) => h.to === Number.POSITIVE_INFINITY), {
        timeout: 60_000,
        interval: 10,
      })
      .toBe(true)
    c.child.kill('SIGKILL')
    const killedAt = performance.now()
    await c.exited
    const cut = holdings(c, killedAt).find((h) => h.to === killedAt)?.pipeline

    // The others carry on until every pipeline completed a run after the kill.
    const doneAfterKill = () =>
      PIPELINES.every((name) =>
        [a, b].some((m) =>
          m.events.some((e) => e.event === 'sync_complete' && e.pipeline === name && e.at > killedAt),
        ),
      )
    await expect.poll(doneAfterKill, { timeout: 120_000, interval: 100 }).toBe(true)
    expect(cut).toBeDefined()
    // The pipeline C was cut off in was taken over and completed by another.
    expect(
      [a, b].some((m) =>
        m.events.some((e) => e.event === 'sync_complete' && e.pipeline === cut && e.at > killedAt),
      ),
    ).toBe(true)
    // Each process skipped some pipeline another held: they divided the work.
    for (const m of [a, b]) expect(m.events.some((e) => e.event === 'sync_skipped')).toBe(true)

    for (const m of [a, b]) m.child.kill('SIGTERM')
    expect(await Promise.all([a.exited, b.exited])).toEqual([0, 0])

    const held = fleet.flatMap((m) => holdings(m, killedAt).map((h) => ({ ...h, by: m.name })))
    for (const name of PIPELINES) {
      const runs = held.filter((h) => h.pipeline === name).sort((x, y) => x.from - y.from)
      for (let i = 1; i < runs.length; i++) {
        const [before, after] = [runs[i - 1]!, runs[i]!]
        if (before.by !== after.by)
          expect(after.from, `${name}: ${after.by} ran while ${before.by} did`).toBeGreaterThanOrEqual(
            before.to,
          )
      }
      expect(await rentalCounts(path.join(p.dir, `${name}.duckdb`))).toEqual({ rows: ROWS, unique: ROWS })
    }
  } finally {
    for (const m of fleet) m.child.kill('SIGKILL')
    await Promise.all(fleet.map((m) => exited(m.child)))
  }
}, 240_000)
