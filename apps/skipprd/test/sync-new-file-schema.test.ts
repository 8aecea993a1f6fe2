/**
 * A file added between two syncs whose records hold what the saved schema lacks: a new JSON key, or
 * a CSV value wider than its column's type. Each sync discovers the files anew, so the second run's
 * discovery already holds the new file's key or type; the File source used to compare its chunks
 * with that discovery only, so it sent no schema and the saved one stayed as it was: DuckDB dropped
 * the new key's values and rounded `1.5` into the integer column, without a word.
 */
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { query } from './support/duckdb.js'
import { type Project, project } from './support/project.js'

const config = (file: string) => `data_sources:
  events: { File: { ${file}, namespace: events } }
data_sinks:
  warehouse: { Duckdb: { path: ./warehouse.duckdb } }
pipelines:
  events: { data_source: data_sources.events, data_sink: data_sinks.warehouse }
`

let p: Project
beforeEach(async () => {
  p = await project()
})
afterEach(async () => {
  await p.remove()
})

/** `sync --once`, which must succeed quietly having read `rows` rows. */
async function syncOnce(rows: number): Promise<void> {
  const run = await runCli(['sync', '--pipeline', 'events', '--once', '--output', 'text'], {
    cwd: p.dir,
    env: {},
  })
  expect(run.stderr).toBe('')
  expect(run.code).toBe(0)
  expect(run.stdout).toMatch(`rows=${rows} `)
}

const events = () => query(path.join(p.dir, 'warehouse.duckdb'), 'SELECT * FROM main.events ORDER BY id')

it('JSON lines: a key first seen in a file added after the first sync becomes a column with its values', async () => {
  await p.write('skippr.yml', config('path: events-*.jsonl, format: jsonl'))
  await p.write('events-1.jsonl', '{"id":1,"name":"a"}\n{"id":2,"name":"b"}\n')
  await syncOnce(2)

  await p.write('events-2.jsonl', '{"id":3,"name":"c","score":7}\n{"id":4,"name":"d","score":8}\n')
  await syncOnce(2)

  expect(await events()).toEqual([
    { id: 1, name: 'a', score: null },
    { id: 2, name: 'b', score: null },
    { id: 3, name: 'c', score: 7 },
    { id: 4, name: 'd', score: 8 },
  ])
}, 120_000)

it('CSV: a fraction in an integer column, in a file added after the first sync, widens the column', async () => {
  await p.write('skippr.yml', config('path: events-*.csv, format: csv'))
  await p.write('events-1.csv', 'id,amount\n1,10\n2,20\n')
  await syncOnce(2)

  await p.write('events-2.csv', 'id,amount\n3,1.5\n4,2.25\n')
  await syncOnce(2)

  expect(await events()).toEqual([
    { id: 1, amount: 10 },
    { id: 2, amount: 20 },
    { id: 3, amount: 1.5 },
    { id: 4, amount: 2.25 },
  ])
}, 120_000)
