/**
 * The command line as a shell user types it, through the built CLI: `--log` with and without a
 * level, anywhere; a bad command line is one line on stderr and exit 2, a bad setting exit 1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { bikehireConfig, type Project, project } from './support/project.js'

let p: Project
beforeAll(async () => {
  p = await project(bikehireConfig({ rows: 100 }))
})
afterAll(() => p.remove())

const cli = (args: string[]) => runCli(args, { cwd: p.dir })
const logLines = (stderr: string) =>
  stderr
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { level: number; msg: string })

describe('--log', { timeout: 60_000 }, () => {
  it('alone before the command means info, and the command runs', async () => {
    const result = await cli(['--log', 'sync', '-p', 'bikehire', '--once', '--output', 'text'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^Sync complete: pipeline=bikehire /m)
    const logs = logLines(result.stderr)
    expect(logs.map((l) => l.msg)).toContain('sync started')
    expect(Math.min(...logs.map((l) => l.level))).toBe(30)
  })

  it('alone at the end means info; with a level, that level', async () => {
    const bare = await cli(['sync', '-p', 'bikehire', '--once', '--output', 'text', '--log'])
    expect(bare.code).toBe(0)
    expect(logLines(bare.stderr).map((l) => l.msg)).toContain('sync complete')
    const warn = await cli(['--log', 'warn', 'sync', '-p', 'bikehire', '--once', '--output', 'text'])
    expect(warn).toMatchObject({ code: 0, stderr: '' })
  })
})

describe('a bad command line: one line on stderr, exit 2', () => {
  it.each([
    [['sync', '--log', 'verbose'], "option '--log [LEVEL]' argument 'verbose' is invalid"],
    [['--log', 'loud', 'sync'], "option '--log [LEVEL]' argument 'loud' is invalid"],
    [['sync', '--onse'], "unknown option '--onse'"],
    [['sync', '--output'], "option '--output <MODE>' argument missing"],
    [['sync', '-p'], "option '-p, --pipeline <NAME>' argument missing"],
    [['frobnicate'], "unknown command 'frobnicate'"],
  ])('%j', async (args, what) => {
    const result = await cli(args)
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain(what)
    expect(result.stderr).toMatch(/^error: [^\n]+ \(run skipprd --help for usage\)\n$/)
  })
})

describe('a bad setting on the command line is a config error: exit 1', { timeout: 60_000 }, () => {
  it.each([
    [['--wal-storage', 'tape'], '[skippr] config failed: WAL_STORAGE=tape is not a WAL backend'],
    [['--store-type', 'tape'], "[skippr] config failed: unknown store type 'tape'"],
  ])('%j', async (flags, line) => {
    const result = await cli(['sync', '-p', 'bikehire', '--once', ...flags])
    expect(result.code).toBe(1)
    expect(result.stderr.startsWith(line)).toBe(true)
    expect(result.stderr.split('\n')).toHaveLength(2)
  })
})
