/**
 * A long-running every-pipeline sync (no --pipeline, no --once) stopped by SIGTERM in the middle of
 * a pipeline's run stops cleanly: exit 0, no failure line, and the next run lands the rest once.
 */
import path from 'node:path'
import { createInterface } from 'node:readline'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { runCli, spawnCli } from './support/cli.js'
import { rentalCounts } from './support/duckdb.js'
import { bikehireConfig, type Project, project } from './support/project.js'

const ROWS = 2_000_000

let p: Project
beforeEach(async () => {
  p = await project(bikehireConfig({ rows: ROWS, batchRows: 10_000 }))
})
afterEach(async () => {
  await p.remove()
})

it('SIGTERM in the middle of a run: exit 0, no failure, and the next run lands the rest once', async () => {
  const child = spawnCli(['sync', '--output', 'json'], { cwd: p.dir })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const events: { event: string }[] = []
  createInterface({ input: child.stdout! }).on('line', (line) => events.push(JSON.parse(line)))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  await expect
    .poll(() => events.some((e) => e.event === 'sync_start'), { timeout: 30_000, interval: 5 })
    .toBe(true)
  child.kill('SIGTERM')
  expect(await exited).toBe(0)
  expect(stderr).not.toMatch(/sync failed|stopped by SIGTERM before/)
  expect(events.some((e) => e.event === 'sync_error')).toBe(false)

  const rest = await runCli(['sync', '-p', 'bikehire', '--once', '--output', 'text'], { cwd: p.dir })
  expect(rest.stderr).toBe('')
  expect(rest.code).toBe(0)
  expect(await rentalCounts(path.join(p.dir, 'warehouse.duckdb'))).toEqual({ rows: ROWS, unique: ROWS })
}, 120_000)
