/**
 * `skipprd df -p <pipeline> [--namespace <ns>]`: the pipeline's rows as `query` shows them (its
 * pending WAL rows, and for a DuckDB data_sink its landed rows too) as
 * `{"header":[...],"rows":[[...]]}`. Without --namespace every namespace is printed one after the
 * other, which needs them all to have the same columns.
 */
import { pipelineRows } from '../query/pipeline-rows.js'
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
      const result = await pipelineRows(session, pipeline, options.namespace)
      if (result === undefined) {
        await context.out('{"header":[],"rows":[]}\n')
        return EXIT_OK
      }
      if (result.kind === 'rows') await renderPlain(result.header, result.chunks, context.out)
      return EXIT_OK
    } finally {
      await session.close()
    }
  })
}
