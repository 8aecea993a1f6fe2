/**
 * A pipeline's rows as `query` shows them (its pending WAL rows, and for a DuckDB data_sink its
 * landed rows too), for `skipprd df` and the programmatic `Session.df()`. Without a namespace every
 * namespace follows the other, which needs them all to have the same columns.
 */
import type { NamespaceSchema } from '@skippr/connector-api'
import { ident } from '@skippr/sink-duckdb'
import { ColumnsDifferError, NamespaceNotFoundError } from './errors.js'
import type { StatementResult } from './result.js'
import type { QuerySession } from './sql-session.js'

/** The rows of `namespace` (or of every namespace); undefined when the pipeline has no namespace yet. */
export async function pipelineRows(
  session: QuerySession,
  pipeline: string,
  namespace: string | undefined,
): Promise<StatementResult | undefined> {
  const { state } = await session.catalog.open(pipeline)
  const schemas = (await state.listSchemas()).map((s) => s.schema as unknown as NamespaceSchema)
  const chosen = pick(pipeline, schemas, namespace)
  if (chosen.length === 0) return undefined
  const select = chosen
    .map((s) => `SELECT * FROM ${ident(pipeline)}.${ident(s.namespace)}`)
    .join(' UNION ALL ')
  return session.sql(select, [pipeline])
}

function pick(
  pipeline: string,
  schemas: readonly NamespaceSchema[],
  namespace: string | undefined,
): NamespaceSchema[] {
  if (namespace !== undefined) {
    const schema = schemas.find((s) => s.namespace === namespace)
    if (!schema)
      throw new NamespaceNotFoundError(
        pipeline,
        namespace,
        schemas.map((s) => s.namespace),
      )
    return [schema]
  }
  const layout = (s: NamespaceSchema) => s.fields.map((f) => `${f.name} ${f.type}`)
  const first = schemas[0]
  if (first && schemas.some((s) => layout(s).join(',') !== layout(first).join(','))) {
    throw new ColumnsDifferError(pipeline, new Map(schemas.map((s) => [s.namespace, layout(s)])))
  }
  return [...schemas]
}
