import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { parseConnectorConfig } from '../src/config.js'
import type { ConnectorDefinition } from '../src/connector.js'
import { CONFIG_INVALID } from '../src/errors.js'

const definition: ConnectorDefinition<{ path: string; rows?: number }> = {
  type: 'Example',
  config: z.strictObject({ path: z.string(), rows: z.number().int().positive().optional() }),
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
