/**
 * A DATA_DIR where no directory can be made. Under /proc, mkdir answers ENOENT for a parent that
 * exists, and Node's recursive mkdir retries that for ever on a thread no signal reaches: the
 * state store, the WAL and the log file each made their directory that way, so such a DATA_DIR
 * hung `sync` until it was killed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { bikehireConfig, type Project, project } from './support/project.js'

let p: Project
beforeEach(async () => {
  p = await project(bikehireConfig({ rows: 10 }))
})
afterEach(async () => {
  await p.remove()
})

const sync = (args: string[], env: Record<string, string>) =>
  runCli(['sync', '--once', ...args], { cwd: p.dir, env, timeoutMs: 20_000 })

describe.runIf(process.platform === 'linux')('a DATA_DIR no directory can be made in', () => {
  it.each([
    ['missing, below /proc', '/proc/skippr-test/data', '/proc/skippr-test/data/state'],
    ['existing, /proc itself', '/proc', '/proc/state'],
  ])('%s: sync fails at once, naming the directory', async (_, dataDir, stateDir) => {
    const result = await sync(['--pipeline', 'bikehire'], { DATA_DIR: dataDir })
    expect(result.signal).toBeNull()
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(
      `[skippr] sync failed: cannot open the state store at ${stateDir}: ENOENT`,
    )
  })

  it('every-pipeline mode says which pipeline failed and why, once', async () => {
    const result = await sync([], { DATA_DIR: '/proc' })
    expect(result.signal).toBeNull()
    expect(result.code).toBe(1)
    const failures = result.stderr.split('\n').filter((line) => line.startsWith('[skippr]'))
    expect(failures).toEqual([
      expect.stringMatching(
        /^\[skippr\] sync of pipeline bikehire failed: cannot open the state store at \/proc\/state: ENOENT/,
      ),
    ])
  })
})

it('every-pipeline mode: a failure the run already reported is not printed twice', async () => {
  await p.write(
    'skippr.yml',
    bikehireConfig({ rows: 10, sink: 'Duckdb: { path: ./warehouse.duckdb/inside/w.duckdb }' }),
  )
  await p.write('warehouse.duckdb', 'a file, so no directory can be made below it')
  const result = await sync([], { SKIPPR_RETRY_BUDGET_SECONDS: '1' })
  expect(result.code).toBe(1)
  const failures = result.stderr.split('\n').filter((line) => line.startsWith('[skippr]'))
  expect(failures).toHaveLength(1)
  expect(failures[0]).toContain('warehouse.duckdb')
})
