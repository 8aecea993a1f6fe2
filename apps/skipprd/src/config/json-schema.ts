/**
 * The JSON Schema of skippr.yml, for editor completion: the file's structure from its valibot
 * schema, and under each section of connector entries (`data_sources`, `data_sinks`, …) one
 * alternative per connector type with that connector's own fields (`toJsonSchema` of its config
 * schema), a data sink's with its `schema_sink` key beside. Secret fields accept only `${NAME}`.
 * Checks across fields have no JSON Schema form and are left out: the editor catches less than
 * skipprd does, never more.
 */
import type { SinkDefinition, SourceDefinition } from '@skippr/connector-api'
import { toJsonSchema } from '@valibot/to-json-schema'
import type { GenericSchema } from 'valibot'
import { CONNECTOR_SECTIONS, fileSchema, SCHEMA_SINK_KEY } from './schema.js'

type JsonSchema = Record<string, unknown>

const JSON_SCHEMA_OPTIONS = { typeMode: 'input', errorMode: 'ignore' } as const

const REFERENCE_PATTERN = '^\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}$'

export function configJsonSchema(
  sources: readonly SourceDefinition[],
  sinks: readonly SinkDefinition[],
): JsonSchema {
  const schema = toJsonSchema(fileSchema, JSON_SCHEMA_OPTIONS) as JsonSchema
  const properties = schema.properties as Record<string, JsonSchema>
  for (const section of CONNECTOR_SECTIONS) {
    properties[section] = {
      ...properties[section],
      additionalProperties: { $ref: `#/$defs/${section}_entry` },
    }
  }
  return {
    $schema: schema.$schema,
    $id: 'skippr.schema.json',
    title: 'skippr.yml',
    description: 'Skippr configuration: data sources, data sinks and the pipelines between them.',
    ...schema,
    $defs: {
      data_sources_entry: entrySchema(sources, 'A data source: exactly one connector type and its fields'),
      data_sinks_entry: entrySchema(
        sinks,
        'A data sink: exactly one connector type and its fields, and optionally its schema_sink',
        { [SCHEMA_SINK_KEY]: SCHEMA_SINK_REFERENCE },
      ),
      deadletter_sinks_entry: entrySchema(sinks, 'A deadletter sink: exactly one sink type and its fields'),
      schema_sinks_entry: entrySchema(sinks, 'A schema sink: exactly one sink type and its fields'),
    },
  }
}

const SCHEMA_SINK_REFERENCE: JsonSchema = {
  description:
    'Where the tables are created and evolved from the saved schema before data lands, as schema_sinks.<name>',
  type: 'string',
  pattern: '^schema_sinks\\.[A-Za-z0-9_-]+$',
}

/** One alternative per connector type; `beside` are the keys an entry may have next to its type key. */
function entrySchema(
  definitions: readonly (SourceDefinition | SinkDefinition)[],
  description: string,
  beside: Record<string, JsonSchema> = {},
): JsonSchema {
  return {
    description,
    oneOf: [...definitions]
      .sort((a, b) => a.type.localeCompare(b.type))
      .map((definition) => ({
        type: 'object',
        properties: { [definition.type]: connectorSchema(definition), ...beside },
        required: [definition.type],
        additionalProperties: false,
      })),
  }
}

function connectorSchema(definition: SourceDefinition | SinkDefinition): JsonSchema {
  // Field completion for connectors whose schema is valibot's; any other validator's fields go unchecked.
  if (definition.config['~standard'].vendor !== 'valibot') return { type: 'object' }
  const config = definition.config as unknown as GenericSchema
  const { $schema: _, ...schema } = toJsonSchema(config, JSON_SCHEMA_OPTIONS) as JsonSchema
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
  for (const field of definition.secretFields ?? []) {
    properties[field] = {
      description: `${(properties[field]?.description as string | undefined) ?? 'A secret'} — a \${NAME} environment variable reference`,
      type: 'string',
      pattern: REFERENCE_PATTERN,
    }
  }
  return schema
}
