/**
 * What each schema change makes of a namespace's saved schema (applied.ts), or why it is refused.
 * Refused, because data already read or landed could not follow: a type that narrows (sinks and
 * the WAL's older rows only widen), and dropping, renaming or merging away a primary-key field.
 *
 * - `replace` (`metadata apply`, `LOAD SCHEMA`): the field list as given. A field keeps the
 *   source columns it had by its name; a new name takes the source column of that name, if any.
 * - `drop`: the field is gone; the source's column is no longer read.
 * - `type`: the field's type, which may only widen (int → long → double, date → timestamp, any → string).
 * - `rename`: the field, in its place, under a new name; its old names kept in `formerNames`.
 * - `merge a into b`: `b` takes `a`'s value where its own is NULL, widened to hold both; `a` is gone.
 */
import { type Field, type FieldType, widenFieldType } from '@skippr/connector-api'
import { type AppliedSchema, sourceLayout, sourcesOf } from './applied.js'
import { SchemaChangeRefusedError } from './errors.js'

export type SchemaChange =
  | { readonly kind: 'replace'; readonly fields: readonly Field[] }
  | { readonly kind: 'drop'; readonly column: string }
  | { readonly kind: 'type'; readonly column: string; readonly type: FieldType }
  | { readonly kind: 'rename'; readonly column: string; readonly to: string }
  | { readonly kind: 'merge'; readonly column: string; readonly into: string }

/** The saved schema after `change`; `current` itself when the change changes nothing. */
export function changedSchema(current: AppliedSchema, change: SchemaChange): AppliedSchema {
  const refuse = (why: string): never => {
    throw new SchemaChangeRefusedError(current.namespace, why)
  }
  const field = (name: string): Field =>
    current.fields.find((f) => f.name === name) ??
    refuse(`it has no column '${name}' (its columns: ${current.fields.map((f) => f.name).join(', ')})`)
  const keep = (name: string, why: string): void => {
    if (current.primaryKey?.includes(name))
      refuse(`'${name}' is part of its primary key (${current.primaryKey.join(', ')}), which ${why}`)
  }
  const widened = (from: Field, type: FieldType): FieldType =>
    widenFieldType(from.type, type) === type
      ? type
      : refuse(
          `'${from.name}' cannot change from ${from.type} to ${type}: types only widen (int, long, double; date, timestamp; any type to string), so the rows already read still fit`,
        )

  let fields: readonly Field[]
  const from: Record<string, readonly string[]> = {}
  for (const f of current.fields) from[f.name] = sourcesOf(current, f.name)
  switch (change.kind) {
    case 'replace': {
      fields = change.fields.map((next) => {
        const before = current.fields.find((f) => f.name === next.name)
        if (!before) {
          from[next.name] = [next.name]
          return next
        }
        const formerNames = before.formerNames === undefined ? {} : { formerNames: before.formerNames }
        return { ...next, type: widened(before, next.type), ...formerNames }
      })
      const names = new Set(fields.map((f) => f.name))
      for (const f of current.fields)
        if (!names.has(f.name)) keep(f.name, 'every row needs: keep it in the field list')
      break
    }
    case 'drop':
      keep(field(change.column).name, 'every row needs')
      if (current.fields.length === 1) refuse(`'${change.column}' is its only column`)
      fields = current.fields.filter((f) => f.name !== change.column)
      break
    case 'type': {
      const before = field(change.column)
      fields = current.fields.map((f) => (f === before ? { ...f, type: widened(before, change.type) } : f))
      break
    }
    case 'rename': {
      const before = field(change.column)
      // The destination's rows landed so far hold the key under its old name: verify and
      // deduplication by key would see them all as NULL keys.
      keep(before.name, 'the rows landed so far hold under this name')
      if (current.fields.some((f) => f.name === change.to))
        refuse(
          `it already has a column '${change.to}': MERGE COLUMN ${change.column} INTO ${change.to} joins two`,
        )
      // The destination's table is renamed on the next sync where the sink can (formerColumn).
      const formerNames = [...(before.formerNames ?? []), before.name].filter((n) => n !== change.to)
      fields = current.fields.map((f) => (f === before ? { ...f, name: change.to, formerNames } : f))
      from[change.to] = from[change.column] ?? [change.column]
      break
    }
    case 'merge': {
      const merged = field(change.column)
      const into = field(change.into)
      if (merged === into) refuse(`a column cannot be merged into itself ('${change.column}')`)
      keep(merged.name, 'every row needs: merge another column into it instead')
      const type = widenFieldType(into.type, merged.type)
      fields = current.fields
        .filter((f) => f !== merged)
        .map((f) =>
          f === into ? { ...f, type, nullable: (into.nullable ?? true) || (merged.nullable ?? true) } : f,
        )
      from[into.name] = [...(from[into.name] ?? []), ...(from[merged.name] ?? [])]
      break
    }
  }
  return build(current, fields, from, current.primaryKey)
}

/** The new saved schema, `from` kept only for fields that do not read their own column. */
function build(
  current: AppliedSchema,
  fields: readonly Field[],
  from: Record<string, readonly string[]>,
  primaryKey: readonly string[] | undefined,
): AppliedSchema {
  const mapped: Record<string, readonly string[]> = {}
  for (const f of fields) {
    const sources = from[f.name] ?? [f.name]
    if (sources.length !== 1 || sources[0] !== f.name) mapped[f.name] = sources
  }
  const next: AppliedSchema = {
    namespace: current.namespace,
    fields,
    ...(primaryKey === undefined ? {} : { primaryKey }),
    sourceFields: sourceLayout(current),
    ...(Object.keys(mapped).length === 0 ? {} : { from: mapped }),
  }
  return sameSchema(current, next) ? current : next
}

function sameSchema(a: AppliedSchema, b: AppliedSchema): boolean {
  const shape = (s: AppliedSchema) =>
    JSON.stringify([
      s.fields.map((f) => [f.name, f.type, f.nullable ?? true]),
      s.primaryKey ?? [],
      s.from ?? {},
    ])
  return shape(a) === shape(b)
}
