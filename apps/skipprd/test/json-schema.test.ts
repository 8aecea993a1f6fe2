import { readFile } from 'node:fs/promises'
import type { SinkDefinition, SourceDefinition } from '@skippr/connector-api'
import * as v from 'valibot'
import { expect, it } from 'vitest'
import { BUNDLED_SINKS, BUNDLED_SOURCES } from '../src/bundled.js'
import { configJsonSchema } from '../src/config/json-schema.js'

/** Parsed JSON, untyped on purpose: the test reads it as an editor would. */
type Json = ReturnType<typeof JSON.parse>

const vault: SourceDefinition = {
  kind: 'source',
  type: 'Vault',
  config: v.strictObject({
    token: v.pipe(v.string(), v.description('API token')),
    rows: v.optional(v.pipe(v.number(), v.integer())),
  }),
  secretFields: ['token'],
  create: () => {
    throw new Error('not used')
  },
}
const lake: SinkDefinition = {
  kind: 'sink',
  type: 'Lake',
  guarantee: 'exactly-once',
  config: vault.config,
  create: () => {
    throw new Error('not used')
  },
}

it("describes the file's structure and each connector's fields under its section", () => {
  const schema = configJsonSchema([vault], [lake]) as Json
  expect(schema).toMatchObject({
    $id: 'skippr.schema.json',
    title: 'skippr.yml',
    additionalProperties: false,
  })
  expect(Object.keys(schema.properties)).toEqual([
    'skippr',
    'data_sources',
    'data_sinks',
    'deadletter_sinks',
    'schema_sinks',
    'pipelines',
    // The vendor's sections skipprd ignores: an editor must not flag what skipprd accepts.
    'dbt',
    'vector_sources',
  ])
  expect(schema.properties.data_sources.additionalProperties).toEqual({ $ref: '#/$defs/data_sources_entry' })
  const [entry] = schema.$defs.data_sources_entry.oneOf
  expect(entry).toMatchObject({ required: ['Vault'], additionalProperties: false })
  expect(entry.properties.Vault.properties.token).toEqual({
    description: `API token — a \${NAME} environment variable reference`,
    type: 'string',
    pattern: '^\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}$',
  })
  expect(entry.properties.Vault.properties.rows).toEqual({ type: 'integer' })
  expect(schema.$defs.data_sinks_entry.oneOf[0].properties.Lake.properties.token.type).toBe('string')
  expect(schema.$defs.deadletter_sinks_entry.oneOf[0].properties.Lake.properties.token.type).toBe('string')
  // A data sink may name its schema sink beside its type key; a schema sink is a sink entry.
  expect(schema.properties.schema_sinks.additionalProperties).toEqual({ $ref: '#/$defs/schema_sinks_entry' })
  expect(schema.$defs.schema_sinks_entry.oneOf[0]).toMatchObject({
    required: ['Lake'],
    additionalProperties: false,
  })
  expect(schema.$defs.data_sinks_entry.oneOf[0].properties.schema_sink).toMatchObject({
    type: 'string',
    pattern: '^schema_sinks\\.[A-Za-z0-9_-]+$',
  })
  expect(schema.$defs.deadletter_sinks_entry.oneOf[0].properties.schema_sink).toBeUndefined()
  expect(Object.keys(schema.properties.pipelines.additionalProperties.properties)).toContain(
    'sync_frequency_seconds',
  )
})

it('is published with every bundled connector', async () => {
  const schema = JSON.parse(await readFile(new URL('../skippr.schema.json', import.meta.url), 'utf8')) as Json
  const types = (entry: Json) => entry.oneOf.map((alt: Json) => Object.keys(alt.properties)[0])
  expect(types(schema.$defs.data_sources_entry)).toHaveLength(BUNDLED_SOURCES.length)
  expect(types(schema.$defs.data_sources_entry)).toEqual(
    expect.arrayContaining(['Sample', 'File', 'Postgres']),
  )
  expect(types(schema.$defs.data_sinks_entry)).toHaveLength(BUNDLED_SINKS.length)
  expect(types(schema.$defs.data_sinks_entry)).toEqual(
    expect.arrayContaining(['Duckdb', 'Postgres', 'File', 'Stdout']),
  )
})
