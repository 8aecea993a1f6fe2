/** Names the sink gives Snowflake: quoted identifiers, qualified tables, stages, staged file names. */
import { createHash } from 'node:crypto'
import type { BatchIdentity, RecordFormat } from '@skippr/connector-api'

/** A Snowflake identifier in double quotes: source names are always quoted (case kept). */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

/**
 * A name from the config (database, schema, stage) as the user would write it in SQL: a plain name
 * stays bare (Snowflake upper-cases it), anything else is quoted.
 */
export function configName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_$]*$/.test(name) ? name : ident(name)
}

/** A dotted config name (`db.schema.stage`), each part as `configName` writes it. */
export function dottedName(name: string): string {
  return name.split('.').map(configName).join('.')
}

export const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16)

/**
 * The staged file of a part: `skippr_<pipeline>_<epoch>_<seq>_<part>` (characters other than
 * letters, digits, `_` and `-` made `_`), a hash of the table and the identity (so two tables or
 * two identities that read the same never share a name), and the format's extension.
 */
export function stagedFileName(id: BatchIdentity, part: number, table: string, format: RecordFormat): string {
  const readable = `skippr_${id.pipeline}_${id.epoch}_${id.seq}_${part}`
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .slice(0, 150)
  const hash = shortHash(`${table}\u0000${id.pipeline}\u0000${id.epoch}\u0000${id.seq}\u0000${part}`)
  return `${readable}_${hash}.${format === 'csv' ? 'csv' : 'json'}.gz`
}
