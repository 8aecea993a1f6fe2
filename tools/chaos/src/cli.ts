/**
 * pnpm --filter @skippr/chaos chaos --sink duckdb|postgres|clickhouse|clickhouse-replicated|amqp|s3|azure-blob|sftp|snowflake|bigquery --rows N --min-kills K --max-runs M [options]
 * Prints one line per run, then kills, runs, elapsed (with `--refused`, where the file's rows
 * landed) and PASS/FAIL. Exit 0 on PASS, 1 on FAIL, 2 on a bad command line.
 */
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import { hasCode } from '@skippr/connector-api'
import { SINKS, type SinkKind } from './destination.js'
import { CHAOS_USAGE, ChaosUsageError } from './errors.js'
import { type ChaosOptions, type ChaosReport, type RunRecord, runChaos } from './harness.js'
import { SOURCE_KINDS } from './refused-rows.js'
import type { RefusedCounts } from './verify-refused.js'

const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/test'
const DEFAULT_AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672'

function parseOptions(argv: string[]): ChaosOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      sink: { type: 'string' },
      rows: { type: 'string', default: '20000' },
      'min-kills': { type: 'string', default: '10' },
      'max-runs': { type: 'string', default: '200' },
      probability: { type: 'string', default: '0.1' },
      seed: { type: 'string' },
      'data-seed': { type: 'string', default: '1' },
      'buffer-bytes': { type: 'string', default: '65536' },
      'batch-rows': { type: 'string', default: '500' },
      refused: { type: 'string', default: '0' },
      'chunk-bytes': { type: 'string', default: '49152' },
      'lease-ttl': { type: 'string', default: '1' },
      'run-timeout': { type: 'string', default: '300' },
      'pg-url': { type: 'string', default: process.env.SKIPPR_TEST_PG_URL ?? DEFAULT_PG_URL },
      'amqp-url': { type: 'string', default: process.env.SKIPPR_TEST_AMQP_URL ?? DEFAULT_AMQP_URL },
      'host-loss': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
    },
  })
  const sink = values.sink
  if (!SINKS.includes(sink as SinkKind))
    throw new ChaosUsageError(`--sink must be one of ${SINKS.join(', ')}`)
  const probability = Number(values.probability)
  if (!(probability > 0 && probability < 1))
    throw new ChaosUsageError('--probability must be between 0 and 1')
  const refused = Number(values.refused)
  if (!(refused >= 0 && refused < 1)) throw new ChaosUsageError('--refused must be a share ≥ 0 and < 1')
  const leaseTtlSeconds = Number(values['lease-ttl'])
  if (!(leaseTtlSeconds > 0)) throw new ChaosUsageError('--lease-ttl must be a number of seconds > 0')
  return {
    sink: sink as SinkKind,
    rows: count('--rows', values.rows, 1),
    minKills: count('--min-kills', values['min-kills'], 0),
    maxRuns: count('--max-runs', values['max-runs'], 1),
    probability,
    chaosSeed: values.seed ?? randomBytes(4).toString('hex'),
    dataSeed: count('--data-seed', values['data-seed'], 0),
    bufferBytes: count('--buffer-bytes', values['buffer-bytes'], 1),
    batchRows: count('--batch-rows', values['batch-rows'], 1),
    refused,
    // The File source's own lower bound (source-file's README, "Config").
    chunkBytes: count('--chunk-bytes', values['chunk-bytes'], 4096),
    leaseTtlSeconds,
    runTimeoutSeconds: count('--run-timeout', values['run-timeout'], 1),
    pgUrl: values['pg-url'],
    amqpUrl: values['amqp-url'],
    hostLoss: values['host-loss'],
    keep: values.keep,
  }
}

function count(flag: string, raw: string, min: number): number {
  const value = Number(raw)
  if (!Number.isSafeInteger(value) || value < min)
    throw new ChaosUsageError(`${flag} must be an integer ≥ ${min}`)
  return value
}

function printRun({ run, chaos, sourceRows, outcome }: RunRecord): void {
  const what =
    outcome.kind === 'killed'
      ? `killed at ${outcome.point} (${outcome.detail})`
      : outcome.kind === 'completed'
        ? `completed, ${outcome.rowsWritten ?? '?'} rows written`
        : `failed: ${outcome.reason}`
  const mode = chaos ? '' : ' [chaos off]'
  console.log(`run ${run}${mode}: ${what} in ${(outcome.ms / 1000).toFixed(1)} s (source ${sourceRows} rows)`)
}

function printReport(options: ChaosOptions, report: ChaosReport): void {
  const points = Object.entries(report.killsByPoint)
    .map(([point, n]) => `${point} ${n}`)
    .join(', ')
  console.log(`sink:      ${options.sink} (${report.destination})`)
  if (report.hosts) console.log(`hosts:     ${report.hosts}`)
  console.log(`rows:      ${report.sourceRows} (steps of ${options.rows}, data seed ${options.dataSeed})`)
  if (report.refused) printRefused(report.refused)
  if (report.extraCopies !== undefined)
    console.log(`copies:    ${report.extraCopies} rows landed again by retries, told apart by _skippr_batch`)
  if (report.objects !== undefined) console.log(`objects:   ${report.objects}, read back`)
  console.log(`kills:     ${report.kills}${points ? ` (${points})` : ''}, chaos seed ${options.chaosSeed}`)
  console.log(
    `runs:      ${report.runs} (${report.failedRuns} failed otherwise${report.finishedWithoutChaos ? ', last without chaos' : ''})`,
  )
  console.log(`elapsed:   ${(report.elapsedMs / 1000).toFixed(1)} s`)
  for (const problem of report.problems) console.log(`problem:   ${problem}`)
  if (!report.pass) console.log(`kept:      ${report.workDir} (runs.log has every run's output)`)
  console.log(report.pass ? 'PASS' : 'FAIL')
}

/** Where the file's rows are: the bad ones by kind, the source's and the destination's. */
function printRefused({ landed, deadletters, good, refusedByKind }: RefusedCounts): void {
  const kinds = (fromSource: boolean) =>
    Object.entries(refusedByKind)
      .filter(([kind]) => SOURCE_KINDS.includes(kind as never) === fromSource)
      .map(([kind, n]) => `${kind} ${n}`)
      .join(', ')
  const bad = Object.values(refusedByKind).reduce((sum, n) => sum + n, 0)
  console.log(
    `refused:   ${bad} bad rows (by the source: ${kinds(true)}; by the destination: ${kinds(false)})`,
  )
  console.log(`landed:    ${landed} rows in the table (${good} good), ${deadletters} in the deadletter table`)
}

try {
  const options = parseOptions(process.argv.slice(2).filter((arg) => arg !== '--'))
  const report = await runChaos({ ...options, onRun: printRun })
  printReport(options, report)
  process.exitCode = report.pass ? 0 : 1
} catch (error) {
  console.error(`[chaos] ${(error as Error).message}`)
  process.exitCode =
    hasCode(error, CHAOS_USAGE) || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? 2 : 1
}
