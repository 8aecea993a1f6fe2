import { expect, test } from 'vitest'
import { runChaos, type SinkKind } from '../src/index.js'
import { ciOptions, killsBetweenCommitAndLand, MIN_KILLS } from './ci-options.js'

// Concurrent: each run has its own s3rver and dynalite, and the two sinks share nothing.
test.concurrent.for<SinkKind>(['duckdb', 'postgres'])(
  `%s: every row lands exactly once through ≥ ${MIN_KILLS} SIGKILLs, each run on a new host (S3 WAL, DynamoDB state)`,
  async (sink) => {
    const report = await runChaos({
      ...ciOptions(sink),
      hostLoss: true,
      chaosSeed: `ci-hosts-${sink}-${Date.now()}`,
    })
    expect(report.problems).toEqual([])
    expect(report.pass).toBe(true)
    expect(report.hosts).toMatch(/data dir deleted after every run/)
    expect(report.kills).toBeGreaterThanOrEqual(MIN_KILLS)
    expect(killsBetweenCommitAndLand(report)).toBeGreaterThan(0)
  },
)
