/**
 * A destination's CLI tests: `sync --once` of Sample rows into one `data_sinks` entry, in a fresh
 * project per test, and the shape of what a failure prints.
 */
import { afterEach, beforeEach } from 'vitest'
import { runCli } from './cli.js'
import { bikehireConfig, type Project, project } from './project.js'

/** Rows a sync writes unless told otherwise. */
export const SYNC_ROWS = 1200

/** A fresh project per test (removed after it), and `sync --once` into a sink entry in it. */
export function useSinkSync() {
  let p: Project
  beforeEach(async () => {
    p = await project()
  })
  afterEach(async () => {
    await p.remove()
  })
  return {
    /** `sync --once` of `rows` Sample rows into `sink` (a data_sinks entry in YAML flow style). */
    async syncInto(sink: string, env: Record<string, string>, rows = SYNC_ROWS) {
      await p.write('skippr.yml', bikehireConfig({ rows, batchRows: 500, sink }))
      return runCli(['sync', '-p', 'bikehire', '--once', '--output', 'text'], {
        cwd: p.dir,
        env: { SKIPPR_RETRY_BUDGET_SECONDS: '600', ...env },
      })
    },
  }
}

/** How many lines stderr has, and its last. */
export function failure(stderr: string) {
  const lines = stderr.trimEnd().split('\n')
  return { lines: lines.length, last: lines.at(-1) ?? '' }
}
