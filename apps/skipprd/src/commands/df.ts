/**
 * `skipprd df -p <pipeline> [--namespace <ns>]`: the pipeline's rows as `query` shows them (its
 * pending WAL rows, and for a DuckDB data_sink its landed rows too) as
 * `{"header":[...],"rows":[[...]]}`. Without --namespace every namespace is printed one after the
 * other, which needs them all to have the same columns.
 */
import type { NamespaceSchema } from '@skippr/connector-api'
import { ident } from '@skippr/sink-duckdb'
import { ColumnsDifferError, NamespaceNotFoundError } from '../query/errors.js'
import { renderPlain } from '../query/render.js'
import { EXIT_OK, EXIT_USAGE, type GlobalOptions, runCommand } from './common.js'
import { openSession } from './query.js'

export interface DfOptions extends GlobalOptions {
  readonly namespace?: string
}

export function df(options: DfOptions): Promise<number> {
  return runCommand('df', options, async (context) => {
    const pipeline = options.pipeline ?? (context.file.env.PIPELINE_NAME || undefined)
    if (pipeline === undefined) {
      context.err('[skippr] df needs a pipeline: pass -p <pipeline> (or set PIPELINE_NAME)\n')
      return EXIT_USAGE
    }
    const session = await openSession(context)
    try {
      const { state } = await session.catalog.open(pipeline)
      const schemas = (await state.listSchemas()).map((s) => s.schema as unknown as NamespaceSchema)
      const chosen = pick(pipeline, schemas, options.namespace)
      if (chosen.length === 0) {
        await context.out('{"header":[],"rows":[]}\n')
        return EXIT_OK
      }
      const select = chosen
        .map((s) => `SELECT * FROM ${ident(pipeline)}.${ident(s.namespace)}`)
        .join(' UNION ALL ')
      const result = await session.sql(select, [pipeline])
      if (result.kind === 'rows') await renderPlain(result.header, result.chunks, context.out)
      return EXIT_OK
    } finally {
      await session.close()
    }
  })
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
