import { expect, test } from 'vitest'
import { runChaos, type SinkKind } from '../src/index.js'
import { ciOptions, killsBetweenCommitAndLand } from './ci-options.js'

/** Fewer kills than the local databases': every write is several round trips through an SDK. */
const MIN_KILLS = Number(process.env.SKIPPR_CHAOS_WAREHOUSES_MIN_KILLS ?? 5)

// Concurrent: each fake runs in this process, but the work is in the skipprd child processes.
test.concurrent.for<SinkKind>(['snowflake', 'bigquery'])(
  `%s (its fake): every row lands exactly once through ≥ ${MIN_KILLS} SIGKILLs of skipprd sync`,
  async (sink) => {
    const report = await runChaos({
      ...ciOptions(sink),
      rows: 10_000,
      minKills: MIN_KILLS,
      maxRuns: MIN_KILLS * 6,
    })
    expect(report.problems).toEqual([])
    expect(report.pass).toBe(true)
    expect(report.kills).toBeGreaterThanOrEqual(MIN_KILLS)
    expect(killsBetweenCommitAndLand(report)).toBeGreaterThan(0)
    // Checked as exactly once on the table itself: no copy is removed.
    expect(report.extraCopies).toBeUndefined()
  },
)
