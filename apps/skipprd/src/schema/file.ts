/**
 * Schema files in the vendor's shape: one namespace is `{"fields":[{"name","field_type","nullable"}]}`
 * with the lowercase field types of @skippr/connector-api (`string`, `int`, `long`, `double`,
 * `boolean`, `date`, `timestamp`, `json`); a whole pipeline is `{"namespaces":{"<ns>":{"fields":[…]}}}`.
 * Reading one refuses anything else with one line naming the file, the place in it and the fix.
 */
import { FIELD_TYPES, type Field, type FieldType, type NamespaceSchema } from '@skippr/connector-api'
import { SchemaFileInvalidError } from './errors.js'

export interface FieldEntry {
  readonly name: string
  readonly field_type: FieldType
  readonly nullable: boolean
}

export interface NamespaceDocument {
  readonly fields: readonly FieldEntry[]
}

export interface PipelineDocument {
  readonly namespaces: Readonly<Record<string, NamespaceDocument>>
}

export function namespaceDocument(schema: NamespaceSchema): NamespaceDocument {
  return {
    fields: schema.fields.map((f) => ({ name: f.name, field_type: f.type, nullable: f.nullable ?? true })),
  }
}

export function pipelineDocument(schemas: readonly NamespaceSchema[]): PipelineDocument {
  return { namespaces: Object.fromEntries(schemas.map((s) => [s.namespace, namespaceDocument(s)])) }
}

/** What a schema file holds: one namespace's fields, or fields per namespace. */
export type SchemaFile =
  | { readonly kind: 'namespace'; readonly fields: readonly Field[] }
  | { readonly kind: 'pipeline'; readonly namespaces: ReadonlyMap<string, readonly Field[]> }

const SHAPE = 'write {"fields":[{"name":"id","field_type":"long","nullable":false}, …]}'

/** Reads `text` (from `where`, a file name or `--schema-json`) as a schema file. */
export function parseSchemaFile(text: string, where: string): SchemaFile {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new SchemaFileInvalidError(where, `not JSON (${(error as Error).message})`, SHAPE)
  }
  if (!isObject(value)) throw new SchemaFileInvalidError(where, 'not a JSON object', SHAPE)
  if ('fields' in value) {
    extraKeys(value, ['fields'], where, '')
    return { kind: 'namespace', fields: parseFields(value.fields, where, 'fields') }
  }
  if (!('namespaces' in value) || !isObject(value.namespaces))
    throw new SchemaFileInvalidError(
      where,
      'it has neither "fields" (one namespace) nor "namespaces" (a pipeline)',
      `${SHAPE}, or {"namespaces":{"<namespace>":{"fields":[…]}}} as SCHEMA DUMP writes it`,
    )
  extraKeys(value, ['namespaces'], where, '')
  const namespaces = new Map<string, readonly Field[]>()
  for (const [namespace, entry] of Object.entries(value.namespaces)) {
    const at = `namespaces.${namespace}`
    if (!isObject(entry)) throw new SchemaFileInvalidError(where, `${at} is not an object`, SHAPE)
    extraKeys(entry, ['fields'], where, `${at}.`)
    namespaces.set(namespace, parseFields(entry.fields, where, `${at}.fields`))
  }
  return { kind: 'pipeline', namespaces }
}

function parseFields(value: unknown, where: string, at: string): Field[] {
  if (!Array.isArray(value) || value.length === 0)
    throw new SchemaFileInvalidError(where, `${at} is not a non-empty array`, SHAPE)
  const seen = new Set<string>()
  return value.map((entry: unknown, i) => {
    const place = `${at}[${i}]`
    if (!isObject(entry)) throw new SchemaFileInvalidError(where, `${place} is not an object`, SHAPE)
    extraKeys(entry, ['name', 'field_type', 'nullable'], where, `${place}.`)
    const { name, field_type: type, nullable } = entry
    if (typeof name !== 'string' || name === '')
      throw new SchemaFileInvalidError(
        where,
        `${place}.name is missing or empty`,
        'give every field a "name"',
      )
    if (seen.has(name))
      throw new SchemaFileInvalidError(
        where,
        `${place}.name '${name}' appears twice`,
        'give each field its own name',
      )
    seen.add(name)
    if (typeof type !== 'string' || !(FIELD_TYPES as readonly string[]).includes(type))
      throw new SchemaFileInvalidError(
        where,
        `${place}.field_type ${JSON.stringify(type ?? null)} is not a field type`,
        `use one of ${FIELD_TYPES.join(', ')}`,
      )
    if (nullable !== undefined && typeof nullable !== 'boolean')
      throw new SchemaFileInvalidError(
        where,
        `${place}.nullable is not true or false`,
        'write true, false, or leave it out (true)',
      )
    return { name, type: type as FieldType, nullable: nullable ?? true }
  })
}

function extraKeys(
  value: Record<string, unknown>,
  allowed: readonly string[],
  where: string,
  at: string,
): void {
  const extra = Object.keys(value).find((k) => !allowed.includes(k))
  if (extra !== undefined)
    throw new SchemaFileInvalidError(
      where,
      `${at}${extra} is not a key of a schema file`,
      `the keys there are ${allowed.join(', ')}`,
    )
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
