import { expect, test } from 'vitest'
import { runChaos, type SinkKind } from '../src/index.js'
import { ciOptions } from './ci-options.js'

/** Fewer kills than the exactly-once runs: each of these also starts a server of its own. */
const MIN_KILLS = Number(process.env.SKIPPR_CHAOS_AT_LEAST_ONCE_MIN_KILLS ?? 5)

// One after another: each brings a ClickHouse (and a ZooKeeper) or loads the shared broker.
test.for<SinkKind>(['clickhouse', 'amqp'])(
  `%s: every row lands, once after removing the copies tagged by _skippr_batch, through ≥ ${MIN_KILLS} SIGKILLs`,
  async (sink) => {
    const report = await runChaos({ ...ciOptions(sink), minKills: MIN_KILLS, maxRuns: MIN_KILLS * 6 })
    expect(report.problems).toEqual([])
    expect(report.pass).toBe(true)
    expect(report.kills).toBeGreaterThanOrEqual(MIN_KILLS)
    // Checked through the copies' part keys, not as exactly once on the table itself.
    expect(report.extraCopies).toBeTypeOf('number')
  },
)

test(`clickhouse-replicated: every row exactly once, no copy at all, through ≥ ${MIN_KILLS} SIGKILLs`, async () => {
  const report = await runChaos({
    ...ciOptions('clickhouse-replicated'),
    minKills: MIN_KILLS,
    maxRuns: MIN_KILLS * 6,
  })
  expect(report.problems).toEqual([])
  expect(report.pass).toBe(true)
  expect(report.kills).toBeGreaterThanOrEqual(MIN_KILLS)
  // Checked as exactly once on the table itself: a copy would be a duplicate rental_id.
  expect(report.extraCopies).toBeUndefined()
})
