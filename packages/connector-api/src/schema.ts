/**
 * Schemas as sources discover them and sinks create them. Field types follow the vendor docs; a
 * column's type may only widen over time (`widenFieldType`), so a sink never has to narrow data
 * it already holds.
 */

export const FIELD_TYPES = [
  'string',
  'int',
  'long',
  'double',
  'boolean',
  'date',
  'timestamp',
  'json',
] as const
export type FieldType = (typeof FIELD_TYPES)[number]

export interface Field {
  readonly name: string
  readonly type: FieldType
  /** Defaults to true: sources rarely prove a column can never be null. */
  readonly nullable?: boolean
  /**
   * The names this field had in earlier schema versions, oldest first (set by a user's RENAME
   * COLUMN). A sink whose table lacks a column of `name` renames the latest of them it has
   * (`formerColumn`) instead of adding an empty column beside the old one.
   */
  readonly formerNames?: readonly string[]
}

/**
 * The existing column that holds `field` under a former name: the latest of its `formerNames` that
 * `hasColumn` accepts, when none of `field.name` exists. Undefined when there is nothing to rename.
 */
export function formerColumn(field: Field, hasColumn: (name: string) => boolean): string | undefined {
  if (hasColumn(field.name)) return undefined
  return [...(field.formerNames ?? [])].reverse().find(hasColumn)
}

export interface NamespaceSchema {
  /** The table / stream name, e.g. `rentals`. */
  readonly namespace: string
  readonly fields: readonly Field[]
  readonly primaryKey?: readonly string[]
}

const NUMERIC_RANK: Partial<Record<FieldType, number>> = { int: 0, long: 1, double: 2 }

/** The narrowest type that holds every value of both `a` and `b`. */
export function widenFieldType(a: FieldType, b: FieldType): FieldType {
  if (a === b) return a
  const ra = NUMERIC_RANK[a]
  const rb = NUMERIC_RANK[b]
  if (ra !== undefined && rb !== undefined) return ra > rb ? a : b
  if ((a === 'date' && b === 'timestamp') || (a === 'timestamp' && b === 'date')) return 'timestamp'
  return 'string'
}

/**
 * Merges a newly observed schema into the saved one: fields keep their order, new fields are
 * appended, types only widen. Returns the saved object itself when nothing changed, so callers
 * can detect evolution with `!==`.
 */
export function evolveSchema(saved: NamespaceSchema, observed: NamespaceSchema): NamespaceSchema {
  const byName = new Map(observed.fields.map((f) => [f.name, f]))
  let changed = false
  const fields: Field[] = saved.fields.map((field) => {
    const seen = byName.get(field.name)
    if (!seen) return field
    const type = widenFieldType(field.type, seen.type)
    if (type === field.type) return field
    changed = true
    return { ...field, type }
  })
  const known = new Set(saved.fields.map((f) => f.name))
  for (const field of observed.fields) {
    if (known.has(field.name)) continue
    changed = true
    fields.push(field)
  }
  return changed ? { ...saved, fields } : saved
}

/** Fields present in `next` but not in `previous`, by name. */
export function addedFields(previous: NamespaceSchema | undefined, next: NamespaceSchema): Field[] {
  const known = new Set(previous?.fields.map((f) => f.name) ?? [])
  return next.fields.filter((f) => !known.has(f.name))
}
