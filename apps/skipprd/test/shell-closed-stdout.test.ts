/**
 * `skipprd … | head -1` through the built CLI: stdout piped into a reader that closes the pipe after
 * the first chunk it gets (the first line at least), as head does. A reader command ends quietly
 * with exit 0; sync stops cleanly and exits 1 with one line, and no row printed into the closed
 * pipe counts as landed.
 */
import { once } from 'node:events'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runCli, spawnCli } from './support/cli.js'
import { rentalCounts } from './support/duckdb.js'
import { bikehireConfig, type Project, project } from './support/project.js'

const ROWS = 20_000

interface ClosedRun {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stderr: string
}

/** Runs the CLI with stdout read until its first chunk, then closed; `stdin` is written to its input. */
async function intoClosingReader(
  args: readonly string[],
  p: Project,
  options: { env?: Record<string, string>; stdin?: string } = {},
): Promise<ClosedRun> {
  const child = spawnCli(args, { cwd: p.dir, env: options.env })
  let stderr = ''
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString()
  })
  child.stdout?.once('data', () => child.stdout?.destroy())
  child.stdin?.end(options.stdin ?? '')
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null]
  return { code, signal, stderr }
}

let p: Project
afterEach(async () => {
  await p.remove()
})

describe('reader commands end quietly, exit 0', { timeout: 120_000 }, () => {
  beforeEach(async () => {
    // No data_sink: the rows stay in the WAL for query and df to read (about 2 MB of output each).
    p = await project(bikehireConfig({ rows: ROWS }).replace('    data_sink: data_sinks.warehouse\n', ''))
    const fill = await runCli(['sync', '-p', 'bikehire', '--once', '--output', 'text'], { cwd: p.dir })
    expect(fill.code).toBe(0)
  })

  it.each([
    ['df', ['df', '-p', 'bikehire']],
    ['query --plain', ['query', '--plain', '--sql', 'SELECT * FROM bikehire.rentals']],
    ['query (table)', ['query', '--sql', 'SELECT * FROM bikehire.rentals']],
  ])('%s', async (_name, args) => {
    expect(await intoClosingReader(args, p)).toEqual({ code: 0, signal: null, stderr: '' })
  })

  it('query reading a piped script', async () => {
    const script = 'SELECT * FROM bikehire.rentals;\nSELECT * FROM bikehire.rentals;\n'
    expect(await intoClosingReader(['query'], p, { stdin: script })).toEqual({
      code: 0,
      signal: null,
      stderr: '',
    })
  })
})

describe('sync stops cleanly, exit 1 with one line', { timeout: 120_000 }, () => {
  const once = ['sync', '-p', 'bikehire', '--once', '--output', 'text']

  it('into the Stdout sink: the rows it could not print stay pending, and the next run prints them', async () => {
    p = await project(bikehireConfig({ rows: ROWS, sink: 'Stdout: { format: jsonl }' }))
    // Logs on: no progress lines, so the rows are all stdout gets and the sink meets the closed pipe.
    const closed = await intoClosingReader(['sync', '-p', 'bikehire', '--once', '--log', 'error'], p)
    expect(closed.code).toBe(1)
    const lines = closed.stderr.split('\n').filter((line) => !line.startsWith('{"level"'))
    expect(lines).toEqual([expect.stringMatching(/^\[skippr\] sync failed: .*stdout/), ''])

    const stats = await runCli(['query', '--plain', '--sql', 'SHOW STATS FOR bikehire'], { cwd: p.dir })
    const { header, rows } = JSON.parse(stats.stdout) as { header: string[]; rows: string[][] }
    const row = Object.fromEntries(header.map((name, i) => [name, rows[0]?.[i]]))
    expect(row).toMatchObject({ rows_landed: '0', rows_pending: String(ROWS) })

    const again = await runCli(['sync', '-p', 'bikehire', '--once', '--log', 'warn'], { cwd: p.dir })
    expect(again.code).toBe(0)
    const printed = again.stdout.split('\n').filter((line) => line.startsWith('{'))
    expect(printed).toHaveLength(ROWS)
    expect(new Set(printed.map((line) => (JSON.parse(line) as { rental_id: number }).rental_id)).size).toBe(
      ROWS,
    )
  })

  it('with another destination: the lease is released and the next run lands the rest once', async () => {
    p = await project(bikehireConfig({ rows: 300_000 }))
    const env = { BUFFER_THRESHOLD_BYTES: '1000000' }
    const closed = await intoClosingReader(once, p, { env })
    expect(closed.code).toBe(1)
    expect(closed.stderr).toMatch(/^\[skippr\] sync (failed|stopped): [^\n]*stdout[^\n]*\n$/)

    const again = await runCli(once, { cwd: p.dir, env: { ...env, SKIPPR_LEASE_WAIT_SECONDS: '0' } })
    expect(again.stderr).toBe('')
    expect(again.code).toBe(0)
    expect(await rentalCounts(`${p.dir}/warehouse.duckdb`)).toEqual({ rows: 300_000, unique: 300_000 })
  })
})
