/**
 * Large results through a shell pipe, `skipprd … | cat`: a table of 150,000 rows prints whole (its
 * column widths once overflowed the stack), and nothing of stdout is lost at exit (a pipe takes
 * 64 KiB at a time, and the CLI ends with process.exit).
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { CLI, cliEnv, runCli } from './support/cli.js'
import { bikehireConfig, type Project, project } from './support/project.js'

/** `skipprd <args> | cat` in sh, as a user types it: the CLI's stdout is a pipe, not a socket. */
async function piped(args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)('sh', ['-c', '"$0" "$@" | cat', process.execPath, CLI, ...args], {
    cwd: p.dir,
    env: cliEnv(),
    maxBuffer: 256 << 20,
  })
}

const ROWS = 150_000

let p: Project
beforeAll(async () => {
  p = await project(bikehireConfig({ rows: ROWS }).replace('    data_sink: data_sinks.warehouse\n', ''))
  const fill = await runCli(['sync', '-p', 'bikehire', '--once', '--output', 'text'], { cwd: p.dir })
  expect(fill.code).toBe(0)
}, 120_000)
afterAll(() => p.remove())

it('query prints a table of 150,000 rows whole, with its row count', { timeout: 120_000 }, async () => {
  const sql = 'SELECT rental_id, member_type FROM bikehire.rentals ORDER BY rental_id'
  const result = await piped(['query', '--sql', sql])
  expect(result.stderr).toBe('')
  const lines = result.stdout.split('\n')
  expect(lines[0]).toBe('rental_id | member_type')
  expect(lines[1]).toBe('----------+------------')
  expect(lines[2]).toMatch(/^ {8}1 \| (member|casual)$/)
  expect(lines[ROWS + 1]).toMatch(/^ {3}150000 \| (member|casual)$/)
  expect(lines.slice(ROWS + 2)).toEqual(['(150000 rows)', ''])
})

it('df through a pipe prints every row before it exits', { timeout: 120_000 }, async () => {
  const result = await piped(['df', '-p', 'bikehire'])
  expect(result.stderr).toBe('')
  const { rows } = JSON.parse(result.stdout) as { rows: string[][] }
  expect(rows).toHaveLength(ROWS)
  expect(rows.at(-1)?.[0]).toBe(String(ROWS))
})
