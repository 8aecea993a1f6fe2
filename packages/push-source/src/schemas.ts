/**
 * The schema of each namespace as pushes arrive: fields in first-seen order, types only widening
 * (connector-api's `evolveSchema`), so a chunk carries its namespace's schema only when it changed.
 */
import { evolveSchema, type Field, type NamespaceSchema } from '@skippr/connector-api'

export class PushSchemas {
  private readonly schemas = new Map<string, NamespaceSchema>()

  /**
   * Merges the fields of a push into its namespace's schema: the schema and whether it changed
   * (the first push of a namespace changes it).
   */
  observe(namespace: string, fields: readonly Field[]): { schema: NamespaceSchema; changed: boolean } {
    const known = this.schemas.get(namespace)
    const observed: NamespaceSchema = { namespace, fields }
    const schema = known ? evolveSchema(known, observed) : observed
    this.schemas.set(namespace, schema)
    return { schema, changed: schema !== known }
  }

  /** The schemas seen so far: what a push source's `discover` knows. */
  all(): NamespaceSchema[] {
    return [...this.schemas.values()]
  }
}
