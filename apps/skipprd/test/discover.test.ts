import { afterEach, beforeEach, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { bikehireConfig, type Project, project } from './support/project.js'

let p: Project
beforeEach(async () => {
  p = await project(bikehireConfig({ rows: 100 }))
})
afterEach(async () => {
  await p.remove()
})

it('discovers and saves the schema; sync then uses it without discovering again', async () => {
  const result = await runCli(['discover', '-p', 'bikehire', '--output', 'json'], { cwd: p.dir })
  expect(result.code).toBe(0)
  const events = result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
  expect(events.map((e) => e.event)).toEqual(['discover_start', 'namespace_discovered', 'discover_complete'])
  expect(events[1]).toMatchObject({
    phase: 'discover',
    pipeline: 'bikehire',
    namespace: 'rentals',
    field_count: 9,
  })
  expect(events[2]).toMatchObject({ phase: 'complete', ok: true, namespaces_discovered: 1, total_fields: 9 })
  // One run id on every event of the run, as sync's events carry theirs.
  expect(new Set(events.map((e) => e.run_id))).toEqual(new Set([expect.stringMatching(/^[0-9a-f-]{36}$/)]))

  const text = await runCli(['discover', '-p', 'bikehire', '--output', 'text'], { cwd: p.dir })
  expect(text.stdout).toMatch(
    /^Discover started: pipeline=bikehire\nDiscover complete: pipeline=bikehire namespaces=1 fields=9 elapsed=\d+ms\n$/,
  )

  const sync = await runCli(['sync', '-p', 'bikehire', '--once', '--output', 'json'], { cwd: p.dir })
  expect(
    sync.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line).event),
  ).toEqual(['sync_start', 'sync_complete'])
})
