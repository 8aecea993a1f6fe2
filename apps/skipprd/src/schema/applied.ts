/**
 * A namespace's saved schema once a user changed it (`metadata apply`, `LOAD SCHEMA`, `ALTER
 * TABLE`). The source goes on sending its rows as it always did, so the saved schema keeps two
 * layouts: `fields`, what the WAL holds and the destination gets, and `sourceFields`, how the
 * source lays its rows out, with `from` naming the source columns each field's value comes from.
 * Without `sourceFields` (never changed by a user) the two are the same, as before.
 *
 * A source that changes its own schema (a new column, a widened type) still evolves the saved one:
 * the change is made in `sourceFields`, and a new source column is added to `fields` unless a
 * field already takes it. A column the user dropped stays dropped, a renamed one keeps its name.
 */
import {
  addedFields,
  evolveSchema,
  type Field,
  type NamespaceSchema,
  widenFieldType,
} from '@skippr/connector-api'

export interface AppliedSchema extends NamespaceSchema {
  /** The layout of the source's rows; absent when no user changed the schema. */
  readonly sourceFields?: readonly Field[]
  /**
   * For a field whose values do not come from the source column of its own name: the source
   * columns they come from, the first one that is not NULL winning (a merge names two).
   */
  readonly from?: Readonly<Record<string, readonly string[]>>
}

/** The source columns `field`'s values come from. */
export function sourcesOf(schema: AppliedSchema, field: string): readonly string[] {
  return schema.from?.[field] ?? [field]
}

/** The source's layout of the namespace's rows. */
export function sourceLayout(schema: AppliedSchema): readonly Field[] {
  return schema.sourceFields ?? schema.fields
}

/**
 * Merges what the source now has (`observed`, in the source's layout) into the saved schema.
 * Returns `saved` itself when nothing changed (callers compare with `!==`).
 */
export function evolveSaved(saved: AppliedSchema, observed: NamespaceSchema): AppliedSchema {
  if (saved.sourceFields === undefined) return evolveSchema(saved, observed)
  const source = { namespace: saved.namespace, fields: saved.sourceFields }
  const evolved = evolveSchema(source, observed)
  if (evolved === source) return saved
  const sourceTypes = new Map(evolved.fields.map((f) => [f.name, f.type]))
  const fields = saved.fields.map((field) => {
    let type = field.type
    for (const column of sourcesOf(saved, field.name)) {
      const seen = sourceTypes.get(column)
      if (seen !== undefined) type = widenFieldType(type, seen)
    }
    return type === field.type ? field : { ...field, type }
  })
  const taken = new Set(saved.fields.flatMap((f) => sourcesOf(saved, f.name)))
  const names = new Set(saved.fields.map((f) => f.name))
  const from = { ...saved.from }
  for (const column of addedFields(source, evolved)) {
    if (taken.has(column.name)) continue
    const renamedTo = from[column.name]
    // A field of this name takes other columns (a rename's or merge's target): it takes this one too.
    if (names.has(column.name) && renamedTo) from[column.name] = [...renamedTo, column.name]
    else if (!names.has(column.name)) fields.push(column)
  }
  return { ...saved, fields, sourceFields: evolved.fields, from }
}
