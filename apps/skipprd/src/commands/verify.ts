/**
 * `skipprd verify -p <pipeline>`: compares, per namespace, the rows the source holds with those in
 * the destination, pending in the WAL and set aside as deadletters, and looks for duplicates in
 * the destination (verify/tally.ts). Exit 1 on a mismatch, 2 without a pipeline.
 */
import { resolvePipeline } from '../runner/session.js'
import { VerifyNoSinkError } from '../verify/errors.js'
import { jsonReport, mismatched, textReport } from '../verify/report.js'
import { tallyPipeline } from '../verify/tally.js'
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type GlobalOptions, runCommand } from './common.js'

export function verify(options: GlobalOptions): Promise<number> {
  return runCommand('verify', options, async (context) => {
    const name = options.pipeline ?? (context.file.env.PIPELINE_NAME || undefined)
    if (name === undefined) {
      context.err('[skippr] verify needs a pipeline: pass -p <pipeline> (or set PIPELINE_NAME)\n')
      return EXIT_USAGE
    }
    const pipeline = await resolvePipeline(context, name, false)
    const { sink } = pipeline
    if (sink === undefined) throw new VerifyNoSinkError(name)
    const tally = await tallyPipeline(context, { ...pipeline, sink })
    if (options.output === 'json') context.out(jsonReport(tally))
    else await textReport(tally, context.out)
    return mismatched(tally).length === 0 ? EXIT_OK : EXIT_FAILURE
  })
}
