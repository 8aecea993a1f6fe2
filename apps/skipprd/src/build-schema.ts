/**
 * Build step (`pnpm build`): writes skippr.schema.json beside package.json from the bundled
 * connectors' config schemas. Fails if a bundled connector cannot be loaded, so the published
 * schema always covers every one of them.
 */
import { writeFileSync } from 'node:fs'
import type { SinkDefinition, SourceDefinition } from '@skippr/connector-api'
import { BUNDLED_SINKS, BUNDLED_SOURCES } from './bundled.js'
import { configJsonSchema } from './config/json-schema.js'

async function load<T>(names: readonly string[], kind: 'source' | 'sink'): Promise<T[]> {
  return Promise.all(
    names.map(async (name) => {
      const definition = ((await import(name)) as Record<string, unknown>)[kind]
      if (!definition) throw new Error(`${name} does not export a ${kind}`)
      return definition as T
    }),
  )
}

const schema = configJsonSchema(
  await load<SourceDefinition>(BUNDLED_SOURCES, 'source'),
  await load<SinkDefinition>(BUNDLED_SINKS, 'sink'),
)
writeFileSync(new URL('../skippr.schema.json', import.meta.url), `${JSON.stringify(schema, null, 2)}\n`)
