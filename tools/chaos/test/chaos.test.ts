import { expect, test } from 'vitest'
import { runChaos, type SinkKind } from '../src/index.js'
import { ciOptions, killsBetweenCommitAndLand, MIN_KILLS } from './ci-options.js'

// Concurrent: the work is in skipprd child processes, and the two sinks do not share anything.
test.concurrent.for<SinkKind>(['duckdb', 'postgres'])(
  `%s: every row lands exactly once through ≥ ${MIN_KILLS} SIGKILLs of skipprd sync`,
  async (sink) => {
    const report = await runChaos(ciOptions(sink))
    expect(report.problems).toEqual([])
    expect(report.pass).toBe(true)
    expect(report.kills).toBeGreaterThanOrEqual(MIN_KILLS)
    expect(killsBetweenCommitAndLand(report)).toBeGreaterThan(0)
  },
)
