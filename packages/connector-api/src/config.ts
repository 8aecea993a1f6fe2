import type { z } from 'zod'
import type { ConnectorDefinition } from './connector.js'
import { ConfigError } from './errors.js'

/** Where a value sits, for error messages: the file and the dotted path inside it. */
export interface ConfigLocation {
  readonly file: string
  readonly path: string
}

/**
 * Validates a connector's raw config with its own schema. The first problem becomes a one-line
 * `ConfigError`: `skippr.yml: data_sinks.warehouse.Duckdb.path: expected string, received number`.
 */
export function parseConnectorConfig<C>(
  definition: ConnectorDefinition<C>,
  raw: unknown,
  at: ConfigLocation,
): C {
  const result = definition.config.safeParse(raw ?? {})
  if (result.success) return result.data
  throw new ConfigError(describeIssue(result.error.issues[0], at))
}

function describeIssue(issue: z.core.$ZodIssue | undefined, at: ConfigLocation): string {
  if (!issue) return `${at.file}: ${at.path}: invalid value`
  const path = [at.path, ...issue.path.map(String)].join('.')
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.join(', ')
    return `${at.file}: ${path}: unknown key ${keys}: remove it or check its spelling`
  }
  return `${at.file}: ${path}: ${issue.message.replace(/^Invalid input: /, '')}`
}
