import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { crossFieldCheck, parseConnectorConfig } from '../src/config.js'
import type { ConnectorDefinition } from '../src/connector.js'
import { CONFIG_INVALID } from '../src/errors.js'

const definition: ConnectorDefinition<{ path: string; rows?: number }> = {
  type: 'Example',
  config: v.strictObject({
    path: v.string(),
    rows: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  }),
}
const at = { file: 'skippr.yml', path: 'data_sinks.warehouse.Example' }

describe('parseConnectorConfig', () => {
  it('returns the validated config', () => {
    expect(parseConnectorConfig(definition, { path: './w.duckdb' }, at)).toEqual({ path: './w.duckdb' })
  })
  it('names file, path and problem in one line for a wrong type', () => {
    expect(() => parseConnectorConfig(definition, { path: 3 }, at)).toThrow(
      'skippr.yml: data_sinks.warehouse.Example.path: expected string, received number',
    )
  })
  it('names a missing key and a value out of range', () => {
    expect(() => parseConnectorConfig(definition, {}, at)).toThrow(
      'skippr.yml: data_sinks.warehouse.Example.path: missing: add it',
    )
    expect(() => parseConnectorConfig(definition, { path: 'x', rows: 0 }, at)).toThrow(
      'skippr.yml: data_sinks.warehouse.Example.rows: expected >=1, received 0',
    )
  })
  it('names the value given where a choice of values was expected, and a fraction for an integer', () => {
    const choice: ConnectorDefinition<{ format: 'csv' | 'jsonl'; rows: number }> = {
      type: 'Example',
      config: v.strictObject({ format: v.picklist(['csv', 'jsonl']), rows: v.pipe(v.number(), v.integer()) }),
    }
    expect(() => parseConnectorConfig(choice, { format: 'xml', rows: 1 }, at)).toThrow(
      'skippr.yml: data_sinks.warehouse.Example.format: expected "csv" | "jsonl", received "xml"',
    )
    expect(() => parseConnectorConfig(choice, { format: 'csv', rows: 1.5 }, at)).toThrow(
      'skippr.yml: data_sinks.warehouse.Example.rows: expected an integer, received 1.5',
    )
  })
  it('reports the alternative of a union the value was meant to match', () => {
    const tables: ConnectorDefinition<{ tables: (string | { name: string })[] }> = {
      type: 'Example',
      config: v.strictObject({
        tables: v.array(v.union([v.string(), v.strictObject({ name: v.string() })])),
      }),
    }
    expect(() => parseConnectorConfig(tables, { tables: ['a', { name: 'b', cursr: 'id' }] }, at)).toThrow(
      'skippr.yml: data_sinks.warehouse.Example.tables.1: unknown key cursr: remove it or check its spelling',
    )
    expect(() => parseConnectorConfig(tables, { tables: [3] }, at)).toThrow(
      'skippr.yml: data_sinks.warehouse.Example.tables.0: expected string | Object, received number',
    )
  })
  it('reports a cross-field problem at the field to fix', () => {
    const pair: ConnectorDefinition<{ fields: { name: string }[] }> = {
      type: 'Example',
      config: v.pipe(
        v.strictObject({ fields: v.array(v.strictObject({ name: v.string() })) }),
        crossFieldCheck((config) =>
          config.fields.flatMap((f, i) =>
            config.fields.findIndex((g) => g.name === f.name) < i
              ? [{ path: ['fields', i, 'name'], message: `duplicate field ${f.name}` }]
              : [],
          ),
        ),
      ),
    }
    expect(() => parseConnectorConfig(pair, { fields: [{ name: 'a' }, { name: 'a' }] }, at)).toThrow(
      'skippr.yml: data_sinks.warehouse.Example.fields.1.name: duplicate field a',
    )
  })
  it('rejects unknown keys with a fix', () => {
    try {
      parseConnectorConfig(definition, { path: 'x', pth: 'y' }, at)
      expect.unreachable()
    } catch (error) {
      expect((error as { code: string }).code).toBe(CONFIG_INVALID)
      expect((error as Error).message).toBe(
        'skippr.yml: data_sinks.warehouse.Example: unknown key pth: remove it or check its spelling',
      )
      expect((error as Error).message).not.toContain('\n')
    }
  })
})
