/** A connector type nobody publishes: the known types and the nearest one, never a package that does not exist. */
import { readdir } from 'node:fs/promises'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { CONNECTOR_TYPES } from '../src/config/connector-types.js'
import { runCli } from './support/cli.js'
import { type Project, project } from './support/project.js'

let p: Project
beforeEach(async () => {
  p = await project()
})
afterEach(async () => {
  await p.remove()
})

const config = (source: string, sink = 'Duckdb: { path: ./warehouse.duckdb }') =>
  `data_sources:\n  sample:\n    ${source}\ndata_sinks:\n  warehouse:\n    ${sink}\npipelines:\n  bikehire:\n    data_source: data_sources.sample\n    data_sink: data_sinks.warehouse\n`

const sync = () => runCli(['sync', '--once', '--output', 'text'], { cwd: p.dir })

it('suggests the nearest known type for a typo and lists the others', async () => {
  await p.write('skippr.yml', config('Sampel: { dataset: bikehire, rows: 10 }'))
  const result = await sync()
  expect(result).toMatchObject({
    code: 1,
    stdout: '',
    stderr:
      '[skippr] config failed: skippr.yml: data_sources.sample: Sampel is not a source type skipprd knows (did you mean Sample?): the source types are File, HttpServer, Postgres, Sample, Websocket\n',
  })
})

it('says when a type is of the other kind', async () => {
  await p.write('skippr.yml', config('Sample: { dataset: bikehire, rows: 10 }', 'Sample: {}'))
  const result = await sync()
  expect(result.stderr).toBe(
    '[skippr] config failed: skippr.yml: data_sinks.warehouse: Sample is not a sink type skipprd knows (Sample is a source): the sink types are Amqp, AzureBlob, Bigquery, Clickhouse, Duckdb, File, Postgres, S3, Sftp, Snowflake, Stdout\n',
  )
})

it('names no install command for a package nobody publishes', async () => {
  await p.write('skippr.yml', config('Sample: { dataset: bikehire, rows: 10 }', 'Teradata: {}'))
  const result = await sync()
  expect(result.code).toBe(1)
  expect(result.stderr).not.toContain('@skippr/sink-teradata')
  expect(result.stderr).toContain('Teradata is not a sink type skipprd knows: the sink types are')
})

it('knows exactly the connector packages of this repository, by the type each declares', async () => {
  const packages = new URL('../../../packages/', import.meta.url)
  const dirs = (await readdir(packages)).filter((d) => /^(source|sink)-/.test(d))
  const declared: Record<'source' | 'sink', string[]> = { source: [], sink: [] }
  for (const dir of dirs) {
    const kind = dir.startsWith('source-') ? 'source' : 'sink'
    const module = (await import(`@skippr/${dir}`)) as Record<string, { type: string } | undefined>
    declared[kind].push(module[kind]?.type ?? `(${dir} exports no ${kind})`)
  }
  expect({ source: declared.source.sort(), sink: declared.sink.sort() }).toEqual({
    source: [...CONNECTOR_TYPES.source],
    sink: [...CONNECTOR_TYPES.sink],
  })
})
