/** The live progress display, driven through a real pseudo-terminal (util-linux `script`). */
import { execFile } from 'node:child_process'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { CLI, cliEnv } from './support/cli.js'
import { rentalCounts } from './support/duckdb.js'
import { bikehireConfig, type Project, project } from './support/project.js'

let p: Project
beforeEach(async () => {
  p = await project(bikehireConfig({ rows: 30_000 }))
})
afterEach(async () => {
  await p.remove()
})

/** Runs the CLI in a 120×40 pseudo-terminal, optionally under `wrapper` (e.g. `timeout`). */
function inTerminal(
  args: string,
  env: Record<string, string> = {},
  wrapper = '',
): Promise<{ code: number; output: string }> {
  const command = `stty cols 120 rows 40; ${wrapper} ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} ${args}`
  return new Promise((resolve) => {
    execFile(
      'script',
      ['-qfec', command, '/dev/null'],
      { cwd: p.dir, env: cliEnv({ TERM: 'xterm-256color', ...env }), timeout: 60_000 },
      (error, stdout) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: stdout }),
    )
  })
}

const ESC = String.fromCharCode(27)
const plain = (text: string) => text.replace(new RegExp(`${ESC}\\[[0-9;?]*[A-Za-z]`, 'g'), '')

it('draws phases with rows, bytes and rate per namespace on a terminal', async () => {
  const { code, output } = await inTerminal('sync --pipeline bikehire --once', {
    BUFFER_THRESHOLD_BYTES: '200000',
  })
  expect(code).toBe(0)
  // Redrawn in place: cursor movement and line erasing, not a log of lines.
  expect(output).toMatch(new RegExp(`${ESC}\\[(\\d+A|2K|1G|G)`))
  const text = plain(output)
  expect(text).toContain('Sync started: pipeline=bikehire')
  expect(text).toMatch(/Ingesting {2}[\d,]+ rows read · [\d.]+ [KMG]?B · [\d,]+ written · [\d,]+ rows\/s/)
  expect(text).toMatch(/Finalising {2}30,000 rows read · [\d.]+ MB · 30,000 written/)
  expect(text).toMatch(/rentals: 30,000 read \([\d.]+ MB\), 30,000 written, [\d,]+ rows\/s/)
  expect(text).toMatch(/Sync complete: pipeline=bikehire namespaces=1 rows=30000 elapsed=\d+ms/)
  expect(await rentalCounts(`${p.dir}/warehouse.duckdb`)).toEqual({ rows: 30_000, unique: 30_000 })
})

it('hides the display when logs go to stderr', async () => {
  const { code, output } = await inTerminal('sync --pipeline bikehire --once --log')
  expect(code).toBe(0)
  const text = plain(output)
  expect(text).not.toContain('Ingesting')
  expect(text).toContain('"msg":"sync complete"')
})

it('stops a long-running sync cleanly on Ctrl-C (SIGINT), display and all', async () => {
  // `timeout` sends SIGINT after 3 s, as Ctrl-C would, and passes on the exit code. Without
  // --foreground it signals the command and then its own process group, and a second SIGINT that
  // arrives apart from the first is the user's "quit at once" (exit 130).
  const { code, output } = await inTerminal(
    'sync --pipeline bikehire',
    {},
    'timeout --foreground --preserve-status -s INT 3',
  )
  expect(code).toBe(0)
  const text = plain(output)
  expect(text).toMatch(/Finalising {2}30,000 rows read/)
  expect(text).toMatch(/Sync complete: pipeline=bikehire namespaces=1 rows=\d+ elapsed=\d+ms/)
})
