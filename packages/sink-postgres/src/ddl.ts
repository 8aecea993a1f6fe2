/**
 * Tables follow the schemas they receive: created when missing, new columns added, a column a user
 * renamed (`Field.formerNames`) renamed, types widened, never narrowed or dropped. All DDL of one sink schema runs under one advisory lock, so two
 * writers preparing the same table at once do not race each other's CREATE or ALTER.
 */
import type { FieldType, NamespaceSchema } from '@skippr/connector-api'
import { BATCHES_TABLE, FENCES_TABLE, formerColumn, widenFieldType } from '@skippr/connector-api'
import pg from 'pg'

const SQL_TYPES: Record<FieldType, string> = {
  string: 'text',
  int: 'integer',
  long: 'bigint',
  double: 'double precision',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamptz',
  json: 'jsonb',
}

/** Existing column types read back as field types; other types (varchar, numeric(…)…) are left alone. */
const FIELD_TYPES: Record<string, FieldType> = {
  text: 'string',
  int2: 'int',
  int4: 'int',
  int8: 'long',
  float4: 'double',
  float8: 'double',
  bool: 'boolean',
  date: 'date',
  timestamp: 'timestamp',
  timestamptz: 'timestamp',
  json: 'json',
  jsonb: 'json',
}

/** Namespaces that would collide with the bookkeeping tables. */
export function isReserved(namespace: string): boolean {
  return namespace.startsWith('_skippr_')
}

/** PostgreSQL keeps the first 63 bytes of a longer name (NAMEDATALEN − 1), with only a NOTICE. */
const MAX_IDENTIFIER_BYTES = 63

/**
 * The first table or column name of `schema` longer than PostgreSQL keeps: cut to 63 bytes it would
 * silently become another name, and two long names one.
 */
export function tooLongName(schema: NamespaceSchema): string | undefined {
  return [schema.namespace, ...schema.fields.map((f) => f.name)].find(
    (name) => Buffer.byteLength(name) > MAX_IDENTIFIER_BYTES,
  )
}

export function qualifiedName(schema: string, table: string): string {
  return `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)}`
}

/** Brings the sink schema, its bookkeeping tables and the namespace's table up to `ns`. One transaction. */
export async function prepareTable(
  client: pg.ClientBase,
  schema: string,
  ns: NamespaceSchema,
): Promise<void> {
  await client.query('BEGIN')
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`skippr ddl ${schema}`])
    await createBookkeeping(client, schema)
    const existing = await columnTypes(client, schema, ns.namespace)
    const table = qualifiedName(schema, ns.namespace)
    if (existing === undefined) {
      const columns = ns.fields.map((f) => `${pg.escapeIdentifier(f.name)} ${SQL_TYPES[f.type]}`)
      await client.query(`CREATE TABLE ${table} (${columns.join(', ')})`)
    } else {
      // RENAME cannot share an ALTER TABLE with other actions.
      for (const [from, to] of renames(existing, ns)) {
        await client.query(
          `ALTER TABLE ${table} RENAME COLUMN ${pg.escapeIdentifier(from)} TO ${pg.escapeIdentifier(to)}`,
        )
        existing.set(to, existing.get(from) as string)
        existing.delete(from)
      }
      const changes = alterations(existing, ns)
      if (changes.length > 0) await client.query(`ALTER TABLE ${table} ${changes.join(', ')}`)
    }
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  }
}

/** The fence table's name before the sinks shared theirs: renamed on first use, tokens kept. */
const LEGACY_FENCE_TABLE = '_skippr_fence'

/** Catalog checks first, so a user without CREATE on the database can still use an existing schema. */
async function createBookkeeping(client: pg.ClientBase, schema: string): Promise<void> {
  const { rows } = await client.query<{ schema: boolean; fence: boolean; legacy: boolean; batches: boolean }>(
    `SELECT to_regnamespace($1) IS NOT NULL AS schema,
            to_regclass($2) IS NOT NULL AS fence,
            to_regclass($3) IS NOT NULL AS legacy,
            to_regclass($4) IS NOT NULL AS batches`,
    [
      pg.escapeIdentifier(schema),
      qualifiedName(schema, FENCES_TABLE),
      qualifiedName(schema, LEGACY_FENCE_TABLE),
      qualifiedName(schema, BATCHES_TABLE),
    ],
  )
  const found = rows[0]
  if (!found?.schema) await client.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`)
  if (!found?.fence && found?.legacy)
    await client.query(
      `ALTER TABLE ${qualifiedName(schema, LEGACY_FENCE_TABLE)} RENAME TO ${pg.escapeIdentifier(FENCES_TABLE)}`,
    )
  else if (!found?.fence)
    await client.query(
      `CREATE TABLE ${qualifiedName(schema, FENCES_TABLE)} (pipeline text PRIMARY KEY, token bigint NOT NULL)`,
    )
  if (!found?.batches)
    await client.query(`CREATE TABLE ${qualifiedName(schema, BATCHES_TABLE)} (
      pipeline text NOT NULL, epoch text NOT NULL, seq bigint NOT NULL,
      landed_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (pipeline, epoch, seq))`)
}

/** Column name → base type name (`int4`, `timestamptz`), or undefined when the table is missing. */
async function columnTypes(
  client: pg.ClientBase,
  schema: string,
  table: string,
): Promise<Map<string, string> | undefined> {
  const { rows } = await client.query<{ name: string; type: string }>(
    `SELECT a.attname AS name, t.typname AS type
       FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
      WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped`,
    [qualifiedName(schema, table)],
  )
  if (rows.length === 0) {
    const exists = await client.query('SELECT to_regclass($1) IS NOT NULL AS found', [
      qualifiedName(schema, table),
    ])
    if (!exists.rows[0]?.found) return undefined
  }
  return new Map(rows.map((r) => [r.name, r.type]))
}

/** [column, field] for each field whose column the table holds under a former name (a user's RENAME COLUMN). */
function renames(existing: Map<string, string>, ns: NamespaceSchema): [string, string][] {
  return ns.fields.flatMap((field) => {
    const former = formerColumn(field, (name) => existing.has(name))
    return former === undefined ? [] : [[former, field.name] as [string, string]]
  })
}

function alterations(existing: Map<string, string>, ns: NamespaceSchema): string[] {
  const changes: string[] = []
  for (const field of ns.fields) {
    const column = pg.escapeIdentifier(field.name)
    const current = existing.get(field.name)
    if (current === undefined) {
      changes.push(`ADD COLUMN ${column} ${SQL_TYPES[field.type]}`)
      continue
    }
    const held = FIELD_TYPES[current]
    if (held === undefined) continue
    const wider = widenFieldType(held, field.type)
    if (wider === held) continue
    const type = SQL_TYPES[wider]
    changes.push(`ALTER COLUMN ${column} TYPE ${type} USING ${column}::${type}`)
  }
  return changes
}
