/**
 * `sync --once` stopped by a signal before the source was read to its end, through the built CLI:
 * SIGTERM (a scheduler's or container's stop) reports it as SIGINT (Ctrl-C) does, and neither
 * claims the run completed — also for a pipeline without data_sink, whose rows stay in the WAL.
 */
import { once } from 'node:events'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { spawnCli } from './support/cli.js'
import { bikehireConfig, type Project, project } from './support/project.js'

let p: Project
beforeEach(async () => {
  // Far more rows than are read before the signal comes.
  p = await project(
    bikehireConfig({ rows: 100_000_000 }).replace('    data_sink: data_sinks.warehouse\n', ''),
  )
})
afterEach(async () => {
  await p.remove()
})

it.each(['SIGINT', 'SIGTERM'] as const)(
  '%s: exit 1, one line saying so, no "Sync complete"',
  { timeout: 60_000 },
  async (signal) => {
    const child = spawnCli(['sync', '-p', 'bikehire', '--once', '--output', 'text'], { cwd: p.dir })
    let stdout = ''
    let stderr = ''
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString()
    })
    const reading = new Promise<void>((resolve) =>
      child.stdout?.on('data', (d: Buffer) => {
        stdout += d.toString()
        if (stdout.includes('[start] Ingesting')) resolve()
      }),
    )
    await reading
    child.kill(signal)
    const [code] = await once(child, 'close')
    expect(code).toBe(1)
    expect(stdout).not.toContain('Sync complete')
    expect(stderr).toBe(
      `[skippr] sync failed: pipeline 'bikehire': sync --once was stopped by ${signal} before every committed batch landed; they stay in the WAL: run sync again\n`,
    )
  },
)
