/**
 * `skipprd benchmark --sink <name>`: skipprd's rate into a destination of skippr.yml beside the
 * destination's own bulk load of the same file (benchmark/run.ts). Exit 1 when a load's row count is
 * wrong, or the benchmark fails.
 */
import { countsRight, headerLine, jsonReport, roundLine, textReport } from '../benchmark/report.js'
import { runBenchmark } from '../benchmark/run.js'
import { EXIT_FAILURE, EXIT_OK, type GlobalOptions, runCommand } from './common.js'

export interface BenchmarkCommandOptions extends GlobalOptions {
  readonly sink: string
  readonly rows: number
  readonly rounds: number
}

export function benchmark(options: BenchmarkCommandOptions): Promise<number> {
  const json = options.output === 'json'
  return runCommand(
    'benchmark',
    options,
    async (context) => {
      const result = await runBenchmark(context, {
        sinkEntry: options.sink,
        rows: options.rows,
        rounds: options.rounds,
        // Text: each round's line as it ends, so a long run shows it is going.
        ...(!json && {
          onStart: (type) =>
            context.out(headerLine({ entry: options.sink, type }, options.rows, options.rounds)),
          onRound: (round, index) => context.out(`${roundLine(options.rows, round, index)}\n`),
        }),
      })
      context.out(json ? jsonReport(result) : textReport(result))
      return countsRight(result) ? EXIT_OK : EXIT_FAILURE
    },
    'stop',
  )
}
