/**
 * The S3 WAL (`WAL_STORAGE=s3`, @skippr/wal-s3) and the dynamodb state store
 * (@skippr/state-dynamodb), each beside its raw limit in the same run, on s3rver and dynalite, which
 * the bench starts on 127.0.0.1 (dynalite in a process of its own, lib/dynalite-process.ts, so its
 * CPU time is its own):
 *
 *  (1) WAL commits of 10 MB batches: `openWal({ backend: s3Wal(…) })` with the log record in a
 *      real state store (the embedded one in a temp dir; then the dynamodb store on dynalite)
 *      commits `--commits` batches of one 10 MB part of bikehire JSON lines (one frame, so one PUT
 *      each), vs a bare PutObject loop of the same bytes to the same s3rver, with the client
 *      settings the WAL's has. MB/s, target ≥ 0.9×; the median ms per commit beside the median ms
 *      per PUT. Timed from the first commit to the last: the WAL's open (HeadBucket, the record's
 *      read and write, a listing) is not, and a commit writes no state (landing does: (2)). A
 *      warm-up of two commits per side comes first, not counted.
 *  (2) state store requests per landed batch: `skipprd sync --once` of 200,000 Sample rows (fewer
 *      with a smaller --rows) into DuckDB with the S3 WAL and the dynamodb store, every source chunk
 *      of 1/100 of the rows flushed as a batch of its own (buffer_threshold_bytes 1), with a counting
 *      proxy in front of dynalite (lib/dynamodb-counter.ts) that counts the requests by operation,
 *      and those on one item by the item's sort key (the state record) too. Landed batches are the WAL record's `acked` after
 *      the run: the FSN of the last landed frame, which on a log that starts empty and holds one
 *      frame per batch is the number of batches landed; it must equal the chunks the source made.
 *      Writes (PutItem + UpdateItem + DeleteItem) per landed batch, target ≤ 2, and reads (GetItem +
 *      Query), the whole run's requests divided by its batches (the run's fixed ones included).
 *  (3) `skipprd sync --once` of `--rows` Sample rows into DuckDB, defaults otherwise, with the S3 WAL
 *      and the dynamodb store vs the disk WAL and the embedded store: rows/s and the ratio, no
 *      target; skipprd's CPU time, and s3rver's and dynalite's.
 *
 * skipprd is the BUILT CLI in a child process (lib/sample-sync.ts), every run on a new host: an
 * empty DATA_DIR, and a new table created before the run (not timed), its WAL under a prefix of its
 * own. In each round the sides of a part run back to back, starting one further along the list each
 * round (lib/rounds.ts); a ratio is taken within a round and the median of the rounds counts, with
 * their range. The bucket is emptied after every side. The machine is shared: nothing here fails on
 * a number; it reports.
 *
 * Needs the built packages: pnpm turbo run build --filter=@skippr/bench...
 * Run:  pnpm --filter @skippr/bench wal-s3 [--rows N] [--rounds N] [--commits N]
 * Env:  SKIPPR_BENCH_DIR  where the temporary data goes (default: the OS temp dir)
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { DeleteObjectsCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { openStateStore, type StateStore } from '@skippr/state'
import { dynamoDbStore } from '@skippr/state-dynamodb'
import { type S3Server, startS3rver } from '@skippr/test-servers'
import { type BatchPart, openWal, type WalBackendType } from '@skippr/wal'
import { s3Wal } from '@skippr/wal-s3'
import { bikehireBodies } from './lib/bikehire.js'
import { type DynaliteProcess, startDynaliteProcess } from './lib/dynalite-process.js'
import { type DynamoDbCounter, startDynamoDbCounter, WRITE_OPERATIONS } from './lib/dynamodb-counter.js'
import { cpuCell, formatRate, machineLine, median, ratioCell, table, verdict } from './lib/report.js'
import { inRotation } from './lib/rounds.js'
import { SAMPLE_PIPELINE, sampleSyncOnce } from './lib/sample-sync.js'
import { cpuMsOf, serverPid } from './lib/server-cpu.js'
import type { SkipprdRun } from './lib/sync-once.js'

const MB = 1_000_000
/** Under WAL_BYTES_PER_FILE's default (10 MiB) with the frame's header: one frame, one PUT. */
const BATCH_BYTES = 10 * MB
const TARGET = { commit: 0.9, writesPerBatch: 2 }
const COUNTED = { rows: 200_000, batches: 100 }
const WARM_UP_COMMITS = 2
const BUCKET = 'skippr-bench-wal'
const READ_OPERATIONS = ['GetItem', 'Query']

const { rows: ROWS, rounds: ROUNDS, commits: COMMITS } = commandLine()
const COUNTED_ROWS = Math.min(COUNTED.rows, ROWS)
const COUNTED_BATCH_ROWS = Math.ceil(COUNTED_ROWS / COUNTED.batches)
const dir = await mkdtemp(path.join(process.env.SKIPPR_BENCH_DIR ?? os.tmpdir(), 'skippr-bench-wal-s3-'))

function commandLine(): { rows: number; rounds: number; commits: number } {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((arg) => arg !== '--'),
    options: {
      rows: { type: 'string', default: '1000000' },
      rounds: { type: 'string', default: '5' },
      commits: { type: 'string', default: '20' },
    },
  })
  const atLeast = (name: string, value: string | undefined, least: number) => {
    const n = Number(value)
    if (!Number.isSafeInteger(n) || n < least) throw new Error(`--${name} must be an integer ≥ ${least}`)
    return n
  }
  return {
    rows: atLeast('rows', values.rows, COUNTED.batches),
    rounds: atLeast('rounds', values.rounds, 1),
    commits: atLeast('commits', values.commits, 1),
  }
}

interface Servers {
  readonly s3: S3Server
  readonly s3Pid: number
  readonly dynalite: DynaliteProcess
  readonly counter: DynamoDbCounter
  /** The bare side's client, with the WAL's client settings; also empties the bucket. */
  readonly client: S3Client
}

interface ServersCpu {
  readonly s3rverCpuMs: number
  readonly dynaliteCpuMs: number
}

/** Runs `task`, and adds the CPU time s3rver and dynalite spent meanwhile. */
async function withServersCpu<T extends object>(
  servers: Servers,
  task: () => Promise<T>,
): Promise<T & ServersCpu> {
  const pids = [servers.s3Pid, servers.dynalite.pid]
  const [s3Before = 0, dynaliteBefore = 0] = await Promise.all(pids.map(cpuMsOf))
  const result = await task()
  const [s3After = 0, dynaliteAfter = 0] = await Promise.all(pids.map(cpuMsOf))
  return { ...result, s3rverCpuMs: s3After - s3Before, dynaliteCpuMs: dynaliteAfter - dynaliteBefore }
}

async function emptyBucket({ client }: Servers): Promise<void> {
  let token: string | undefined
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, ContinuationToken: token }))
    const keys = (page.Contents ?? []).flatMap(({ Key }) => (Key ? [{ Key }] : []))
    if (keys.length > 0)
      await client.send(new DeleteObjectsCommand({ Bucket: BUCKET, Delete: { Objects: keys, Quiet: true } }))
    token = page.IsTruncated ? page.NextContinuationToken : undefined
  } while (token)
}

/** A new table on dynalite, made before the run that uses it (dynalite keeps one CREATING for 0.5 s). */
async function withTable<T>(
  servers: Servers,
  task: (name: string, store: StateStore) => Promise<T>,
): Promise<T> {
  const name = `skippr-bench-${randomBytes(4).toString('hex')}`
  const store = await openStateStore({
    type: dynamoDbStore,
    dataDir: dir,
    name,
    endpoint: servers.dynalite.endpoint,
    create: true,
  })
  try {
    return await task(name, store)
  } finally {
    await store.close()
  }
}

// ---- (1) WAL commits ----

/** A loop of one request after another, each one's latency, and this process's CPU time. */
interface Loop extends ServersCpu {
  readonly ms: number
  readonly cpuMs: number
  readonly latencies: readonly number[]
}

interface CommitRound {
  readonly embedded: Loop
  readonly dynamodb: Loop
  readonly bare: Loop
}

async function timedLoop(
  servers: Servers,
  count: number,
  step: (i: number) => Promise<unknown>,
): Promise<Loop> {
  return withServersCpu(servers, async () => {
    const latencies: number[] = []
    const cpu = process.cpuUsage()
    const started = performance.now()
    for (let i = 0; i < count; i++) {
      const at = performance.now()
      await step(i)
      latencies.push(performance.now() - at)
    }
    const ms = performance.now() - started
    const { user, system } = process.cpuUsage(cpu)
    return { ms, cpuMs: (user + system) / 1000, latencies }
  })
}

/** One part of whole bikehire JSON lines, at most 10 MB. */
function batchPart(): BatchPart {
  const [first] = bikehireBodies(BATCH_BYTES / 100, BATCH_BYTES, 'jsonl')
  if (!first) throw new Error('the Sample encoder made no rows')
  const body = first.body.subarray(0, first.body.lastIndexOf(10, BATCH_BYTES - 1) + 1)
  let rows = 0
  for (let at = body.indexOf(10); at !== -1; at = body.indexOf(10, at + 1)) rows++
  return { namespace: 'rentals', schemaVersion: 1, format: 'jsonl', rows, body }
}

/** The S3 WAL with its records in `store`, under a prefix of the bucket of its own. */
function walBackend(servers: Servers, store: StateStore, prefix: string): WalBackendType {
  const { s3 } = servers
  return s3Wal({
    bucket: `${BUCKET}/${prefix}`,
    workspace: store.workspace,
    region: s3.region,
    endpoint: s3.endpoint,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    records: (pipeline) => store.pipeline(pipeline).walRecord(),
  })
}

async function walCommits(
  servers: Servers,
  store: StateStore,
  backend: WalBackendType,
  part: BatchPart,
  name: string,
  count: number,
): Promise<Loop> {
  // A new pipeline each round: a new, empty log and record.
  const pipeline = `commits-${name}`
  const state = store.pipeline(pipeline)
  const wal = await openWal({
    pipeline,
    dataDir: dir,
    backend,
    // Saved by landing and reset, neither of which the bench does.
    positions: {
      load: () => state.getResumeOffset(),
      save: (offset) => (offset === undefined ? state.reset() : state.saveResumeOffset(offset)),
    },
  })
  try {
    return await timedLoop(servers, count, (i) => wal.commit({ offset: { batch: i }, parts: [part] }))
  } finally {
    await wal.close()
    await emptyBucket(servers)
  }
}

async function barePuts(servers: Servers, part: BatchPart, name: string, count: number): Promise<Loop> {
  const { body } = part
  try {
    return await timedLoop(servers, count, (i) =>
      servers.client.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `bare/${name}/${i}`,
          Body: body,
          ContentLength: body.length,
        }),
      ),
    )
  } finally {
    await emptyBucket(servers)
  }
}

// ---- (2) state requests per landed batch ----

interface CountedRun {
  readonly batches: number
  readonly operations: ReadonlyMap<string, number>
  /** By operation and sort key (lib/dynamodb-counter.ts). */
  readonly items: ReadonlyMap<string, number>
}

function s3Env(
  servers: Servers,
  table: string,
  prefix: string,
  dynamoDbEndpoint: string,
): Record<string, string> {
  const { s3 } = servers
  return {
    WAL_STORAGE: 's3',
    SKIPPR_WAL_S3_BUCKET: `${BUCKET}/${prefix}`,
    SKIPPR_STORE_TYPE: 'dynamodb',
    SKIPPR_STORE_NAME: table,
    AWS_REGION: s3.region,
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    AWS_ENDPOINT_URL_S3: s3.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: dynamoDbEndpoint,
  }
}

/** The batches the run landed: the WAL record's `acked` (see the header). */
async function landedBatches(store: StateStore): Promise<number> {
  const stored = await store.pipeline(SAMPLE_PIPELINE).walRecord().read()
  return Number((stored?.value as { acked?: string } | undefined)?.acked ?? 0)
}

async function countedSync(servers: Servers, round: number): Promise<CountedRun> {
  const name = `counted-${round}`
  const { counter } = servers
  try {
    return await withTable(servers, async (table, store) => {
      counter.reset()
      await sampleSyncOnce(dir, {
        name,
        rows: COUNTED_ROWS,
        batchRows: COUNTED_BATCH_ROWS,
        // Every chunk of the source is a batch of its own.
        bufferThresholdBytes: 1,
        env: s3Env(servers, table, name, counter.endpoint),
      })
      const run = { operations: counter.operations(), items: counter.itemRequests() }
      const batches = await landedBatches(store)
      const chunks = Math.ceil(COUNTED_ROWS / COUNTED_BATCH_ROWS)
      if (batches !== chunks)
        throw new Error(`the WAL record says ${batches} batches landed; the source made ${chunks} chunks`)
      return { ...run, batches }
    })
  } finally {
    await rm(path.join(dir, name), { recursive: true, force: true })
    await emptyBucket(servers)
  }
}

// ---- (3) the whole sync ----

type SyncRun = SkipprdRun & ServersCpu

interface SyncRound {
  readonly s3: SyncRun
  readonly disk: SyncRun
}

async function syncRound(servers: Servers, round: number): Promise<SyncRound> {
  const run = async (name: string, sync: () => Promise<SkipprdRun>) => {
    try {
      return await withServersCpu(servers, sync)
    } finally {
      await rm(path.join(dir, name), { recursive: true, force: true })
    }
  }
  return inRotation(round, {
    s3: () =>
      withTable(servers, async (table) => {
        const name = `s3-${round}`
        const env = s3Env(servers, table, name, servers.dynalite.endpoint)
        const synced = await run(name, () => sampleSyncOnce(dir, { name, rows: ROWS, env }))
        await emptyBucket(servers)
        return synced
      }),
    disk: () => {
      const name = `disk-${round}`
      return run(name, () => sampleSyncOnce(dir, { name, rows: ROWS }))
    },
  })
}

// ---- report ----

const ms = (runs: readonly { ms: number }[]) => median(runs.map((r) => r.ms))
const seconds = (cpuMs: readonly number[]) => `${(median(cpuMs) / 1000).toFixed(2)} s`
const rate = (bytes: number, wallMs: number) => `${(bytes / MB / (wallMs / 1000)).toFixed(1)} MB/s`
/** A median with the range of the rounds. */
const spread = (xs: readonly number[], digits: number) =>
  `${median(xs).toFixed(digits)}${xs.length > 1 ? ` (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})` : ''}`

function loopCell(label: string, loops: readonly Loop[], batchBytes: number, withDynalite: boolean): string {
  const latency = median(loops.flatMap((l) => l.latencies)).toFixed(0)
  const servers = [
    `s3rver ${seconds(loops.map((l) => l.s3rverCpuMs))}`,
    ...(withDynalite ? [`dynalite ${seconds(loops.map((l) => l.dynaliteCpuMs))}`] : []),
  ]
  return `${label}${rate(COMMITS * batchBytes, ms(loops))}, ${latency} ms each, ${cpuCell(loops)}, ${servers.join(', ')}`
}

function syncCell(label: string, runs: readonly SyncRun[], withServers: boolean): string {
  const servers = withServers
    ? `, s3rver ${seconds(runs.map((r) => r.s3rverCpuMs))}, dynalite ${seconds(runs.map((r) => r.dynaliteCpuMs))}`
    : ''
  return `${label}${formatRate(ROWS, ms(runs))}, ${cpuCell(runs)}${servers}`
}

const perBatch = (runs: readonly CountedRun[], count: (run: CountedRun) => number) =>
  runs.map((run) => count(run) / run.batches)
const sumOf = (counts: ReadonlyMap<string, number>, names: readonly string[]) =>
  names.reduce((sum, name) => sum + (counts.get(name) ?? 0), 0)

function report(
  commits: readonly CommitRound[],
  counted: readonly CountedRun[],
  syncs: readonly SyncRound[],
  batchBytes: number,
): void {
  const rows: string[][] = [['part', 'skipprd', 'raw limit', 'ratio', 'target', 'met']]
  const bare = commits.map((r) => r.bare)
  for (const store of ['embedded', 'dynamodb'] as const) {
    const ratios = commits.map((r) => r.bare.ms / r[store].ms)
    rows.push([
      `(1) WAL commit, ${store} store`,
      loopCell(
        '',
        commits.map((r) => r[store]),
        batchBytes,
        store === 'dynamodb',
      ),
      loopCell('bare PutObject ', bare, batchBytes, false),
      ratioCell(ratios),
      `≥ ${TARGET.commit}×`,
      verdict(median(ratios) >= TARGET.commit),
    ])
  }
  const writes = perBatch(counted, (run) => sumOf(run.operations, WRITE_OPERATIONS))
  const reads = perBatch(counted, (run) => sumOf(run.operations, READ_OPERATIONS))
  rows.push([
    '(2) state store per landed batch',
    `${spread(writes, 2)} writes, ${spread(reads, 2)} reads (${counted[0]?.batches} batches)`,
    '',
    '',
    `≤ ${TARGET.writesPerBatch} writes`,
    verdict(median(writes) <= TARGET.writesPerBatch),
  ])
  rows.push([
    `(3) sync of ${ROWS.toLocaleString('en')} rows`,
    syncCell(
      'S3 WAL + dynamodb ',
      syncs.map((r) => r.s3),
      true,
    ),
    syncCell(
      'disk WAL + embedded ',
      syncs.map((r) => r.disk),
      false,
    ),
    ratioCell(syncs.map((r) => r.disk.ms / r.s3.ms)),
    '—',
    '',
  ])
  console.log(`\n${table(rows)}\n`)
  console.log('(2) requests to dynalite per landed batch, by operation, then by operation and sort key:')
  console.log(`${table(countTable(counted))}\n`)
  console.log(
    `Medians of ${ROUNDS} rounds. (1): ${COMMITS} commits of ${(batchBytes / MB).toFixed(2)} MB per side and round, ` +
      "MB/s over the loop, ms each the median of all commits or PUTs; CPU is this process's during the loop, " +
      "s3rver's and dynalite's beside. (2): the run's requests divided by its landed batches, fixed ones " +
      `(lease, schema, the WAL's open) included; a ${COUNTED_ROWS.toLocaleString('en')}-row sync in ` +
      `${COUNTED.batches} batches. (3): rows/s spawn to exit, CPU of skipprd (user + system), of s3rver ` +
      "and dynalite during the run; the ratio is the disk run's time over the S3 run's.",
  )
}

/** Each operation's and each written sort key's requests per landed batch, median of the rounds. */
function countTable(counted: readonly CountedRun[]): string[][] {
  const keys = (pick: (run: CountedRun) => ReadonlyMap<string, number>) =>
    [...new Set(counted.flatMap((run) => [...pick(run).keys()]))].sort()
  const row = (label: string, pick: (run: CountedRun) => ReadonlyMap<string, number>, key: string) => [
    label,
    spread(
      perBatch(counted, (run) => pick(run).get(key) ?? 0),
      2,
    ),
    String(median(counted.map((run) => pick(run).get(key) ?? 0))),
  ]
  return [
    ['requests', 'per landed batch', 'per run'],
    ...keys((run) => run.operations).map((op) => row(op, (run) => run.operations, op)),
    ...keys((run) => run.items).map((item) => row(`  ${item}`, (run) => run.items, item)),
  ]
}

// ---- main ----

async function startServers(): Promise<Servers> {
  const s3 = await startS3rver()
  let dynalite: DynaliteProcess | undefined
  let counter: DynamoDbCounter | undefined
  try {
    await s3.createBucket(BUCKET)
    dynalite = await startDynaliteProcess()
    counter = await startDynamoDbCounter(dynalite.endpoint)
    // The bench's own dynamodb store takes its region and credentials from the AWS chain, as
    // skipprd's does: these servers' (dynalite takes any).
    process.env.AWS_REGION = s3.region
    process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId
    process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
      forcePathStyle: true,
      // As @skippr/s3-client configures the WAL's client.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    })
    return { s3, s3Pid: await serverPid(s3.dir), dynalite, counter, client }
  } catch (error) {
    await counter?.stop()
    await dynalite?.stop()
    await s3.stop()
    throw error
  }
}

async function stopServers(servers: Servers): Promise<void> {
  servers.client.destroy()
  await servers.counter.stop()
  await servers.dynalite.stop()
  await servers.s3.stop()
}

let servers: Servers | undefined
const stores: StateStore[] = []
try {
  console.log(machineLine('S3 WAL and dynamodb state store bench'))
  const started = performance.now()
  const s = await startServers()
  servers = s
  const part = batchPart()
  const embedded = await openStateStore({ dataDir: path.join(dir, 'embedded') })
  stores.push(embedded)
  const dynamodb = await openStateStore({
    type: dynamoDbStore,
    dataDir: dir,
    name: `skippr-bench-commits-${randomBytes(4).toString('hex')}`,
    endpoint: s.dynalite.endpoint,
    create: true,
  })
  stores.push(dynamodb)
  const backends = {
    embedded: walBackend(s, embedded, 'embedded'),
    dynamodb: walBackend(s, dynamodb, 'dynamodb'),
  }
  const commitRound = (round: number, name: string, count: number): Promise<CommitRound> =>
    inRotation(round, {
      embedded: () => walCommits(s, embedded, backends.embedded, part, name, count),
      dynamodb: () => walCommits(s, dynamodb, backends.dynamodb, part, name, count),
      bare: () => barePuts(s, part, name, count),
    })
  // Not counted: each client's first requests connect, and load and compile the SDK's code for them.
  await commitRound(0, 'warm-up', WARM_UP_COMMITS)
  const commits: CommitRound[] = []
  const counted: CountedRun[] = []
  const syncs: SyncRound[] = []
  for (let round = 0; round < ROUNDS; round++) {
    commits.push(await commitRound(round, String(round), COMMITS))
    counted.push(await countedSync(s, round))
    syncs.push(await syncRound(s, round))
    console.log(`round ${round + 1} of ${ROUNDS} done`)
  }
  report(commits, counted, syncs, part.body.length)
  console.log(machineLine(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`))
} finally {
  for (const store of stores) await store.close()
  if (servers) await stopServers(servers)
  await rm(dir, { recursive: true, force: true })
}
