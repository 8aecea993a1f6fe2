import type { ChaosOptions, ChaosReport, SinkKind } from '../src/index.js'

/** CI's chaos run: small, but at least this many kills (SKIPPR_CHAOS_MIN_KILLS raises it). */
export const MIN_KILLS = Number(process.env.SKIPPR_CHAOS_MIN_KILLS ?? 10)

/**
 * One ~45 KB source chunk per 32 KB buffer: every chunk is its own batch, so a quarter of the
 * kill points visited lie between commit and land (after-commit, mid-write, after-land).
 */
export function ciOptions(sink: SinkKind): ChaosOptions {
  return {
    sink,
    rows: 20_000,
    minKills: MIN_KILLS,
    maxRuns: MIN_KILLS * 6,
    probability: 0.1,
    chaosSeed: `ci-${sink}-${Date.now()}`,
    dataSeed: 7,
    bufferBytes: 32 * 1024,
    batchRows: 500,
    refused: 0,
    chunkBytes: 48 * 1024,
    leaseTtlSeconds: 1,
    runTimeoutSeconds: 120,
    pgUrl: process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    amqpUrl: process.env.SKIPPR_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
    hostLoss: false,
    keep: false,
  }
}

/** CI's `--refused` run: the same shape, fewer kills (every run also sets rows aside). */
export const REFUSED_MIN_KILLS = Number(process.env.SKIPPR_CHAOS_REFUSED_MIN_KILLS ?? 4)

/**
 * 2% of 20,000 rows bad, about ten per 48 KB file chunk (each its own batch): most batches have
 * records the source set aside and rows the destination refuses.
 */
export function refusedCiOptions(sink: SinkKind): ChaosOptions {
  return {
    ...ciOptions(sink),
    minKills: REFUSED_MIN_KILLS,
    maxRuns: REFUSED_MIN_KILLS * 3,
    chaosSeed: `ci-refused-${sink}-${Date.now()}`,
    refused: 0.02,
  }
}

/** Kills in the window the sinks' exactly-once guarantee is about. */
export function killsBetweenCommitAndLand(report: ChaosReport): number {
  const { killsByPoint: k } = report
  return (k['after-commit'] ?? 0) + (k['mid-write'] ?? 0) + (k['after-land'] ?? 0)
}
