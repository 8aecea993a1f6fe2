/**
 * The `--refused` chaos mode end to end: a CSV file with bad rows the File source sets aside and
 * rows the destination refuses, synced through SIGKILLs of the built skipprd into each sink with a
 * deadletter sink in the same database. PASS means every good row once in the table and every bad
 * one once in `_dl_bikehire` (verify-refused.ts).
 */
import { expect, test } from 'vitest'
import { runChaos, type SinkKind } from '../src/index.js'
import { REFUSED_MIN_KILLS, refusedCiOptions } from './ci-options.js'

// Concurrent: the work is in skipprd child processes, and the two sinks do not share anything.
test.concurrent.for<SinkKind>(['duckdb', 'postgres'])(
  `%s: good rows land once and refused rows are deadletters once, through ≥ ${REFUSED_MIN_KILLS} SIGKILLs`,
  async (sink) => {
    const report = await runChaos(refusedCiOptions(sink))
    expect(report.problems).toEqual([])
    expect(report.pass).toBe(true)
    expect(report.kills).toBeGreaterThanOrEqual(REFUSED_MIN_KILLS)
    const counts = report.refused!
    const bad = Object.values(counts.refusedByKind).reduce((sum, n) => sum + n, 0)
    expect(counts).toMatchObject({ landed: counts.good, deadletters: bad })
    expect(counts.good + bad).toBe(report.sourceRows)
    // Both ways a row is refused happened: the source's and the destination's.
    expect(Object.values(counts.refusedByKind).every((n) => n > 0)).toBe(true)
  },
)
