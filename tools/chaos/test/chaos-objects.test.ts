import { expect, test } from 'vitest'
import { runChaos, type SinkKind } from '../src/index.js'
import { ciOptions, killsBetweenCommitAndLand } from './ci-options.js'

/** Fewer kills than the database runs: each of these also starts a server of its own. */
const MIN_KILLS = Number(process.env.SKIPPR_CHAOS_OBJECTS_MIN_KILLS ?? 5)
/**
 * Half the database runs' rows (20 batches of one chunk each): every run visits half the kill
 * points, so fewer runs die before one gets through and each test stays well under a minute.
 */
const ROWS = 10_000

// One after another: each brings its own server (s3rver, Azurite, sshd) onto the same 2 cores.
// S3 lands JSON lines, Azure Blob Parquet, SFTP gzip'd CSV with manifests: each format is killed somewhere.
test.for<SinkKind>(['s3', 'azure-blob', 'sftp'])(
  `%s: every row exactly once in the final object set, every object in the key layout and no other, through ≥ ${MIN_KILLS} SIGKILLs`,
  async (sink) => {
    const report = await runChaos({
      ...ciOptions(sink),
      rows: ROWS,
      minKills: MIN_KILLS,
      maxRuns: MIN_KILLS * 6,
    })
    expect(report.problems).toEqual([])
    expect(report.pass).toBe(true)
    expect(report.kills).toBeGreaterThanOrEqual(MIN_KILLS)
    expect(killsBetweenCommitAndLand(report)).toBeGreaterThan(0)
    // Overwrite on retry: checked as exactly once on the objects themselves, no copy removed.
    expect(report.extraCopies).toBeUndefined()
  },
)
