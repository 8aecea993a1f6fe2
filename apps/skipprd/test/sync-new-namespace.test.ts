/**
 * A namespace the saved schemas lack: sync discovers it itself. Renaming a File source's
 * `namespace:` used to stop every later sync ("it was never discovered") until the user ran
 * `skipprd discover` by hand, because sync discovered only a pipeline with no saved schema at all.
 */
import { appendFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { query } from './support/duckdb.js'
import { type Project, project } from './support/project.js'

const config = (namespace: string) => `data_sources:
  trips: { File: { path: ./trips.csv, format: csv, namespace: ${namespace} } }
data_sinks:
  warehouse: { Duckdb: { path: ./warehouse.duckdb } }
pipelines:
  trips: { data_source: data_sources.trips, data_sink: data_sinks.warehouse }
`

let p: Project
beforeEach(async () => {
  p = await project(config('trips'))
  await p.write('trips.csv', 'id,name\n1,a\n2,b\n')
})
afterEach(async () => {
  await p.remove()
})

const syncOnce = () =>
  runCli(['sync', '--pipeline', 'trips', '--once', '--output', 'text'], { cwd: p.dir, env: {} })

it('after a File source namespace is renamed, new rows land under the new name without a manual discover', async () => {
  expect(await syncOnce()).toMatchObject({ code: 0, stderr: '' })
  await p.write('skippr.yml', config('journeys'))
  await appendFile(path.join(p.dir, 'trips.csv'), '3,c\n4,d\n')

  const renamed = await syncOnce()
  expect(renamed.stderr).toBe('')
  expect(renamed.code).toBe(0)
  expect(renamed.stdout).toMatch(/Sync complete: pipeline=trips namespaces=2 rows=2 /)
  const warehouse = path.join(p.dir, 'warehouse.duckdb')
  expect(await query(warehouse, 'SELECT id, name FROM main.journeys ORDER BY id')).toEqual([
    { id: 3, name: 'c' },
    { id: 4, name: 'd' },
  ])
  // Rows read before the rename stay where they landed, once.
  expect(await query(warehouse, 'SELECT count(*) AS n FROM main.trips')).toEqual([{ n: 2n }])
})
