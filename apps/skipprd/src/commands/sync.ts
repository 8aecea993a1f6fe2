/** `skipprd sync`: one pipeline (`--pipeline` / PIPELINE_NAME) or every pipeline in turn. */

import { envSeconds } from '../config/settings.js'
import { enableDeadBufferRelease, keepYoungGenerationSize } from '../heap.js'
import { jsonReporter, STATUS_INTERVAL_MS } from '../output/json.js'
import { type Reporter, silentReporter } from '../output/reporter.js'
import { textReporter } from '../output/text.js'
import type { SyncListener } from '../runner/events.js'
import { resolvePipeline, syncEveryPipeline, syncPipeline } from '../runner/session.js'
import {
  type CommandContext,
  EXIT_FAILURE,
  EXIT_OK,
  failureLine,
  type GlobalOptions,
  isReported,
  markReported,
  runCommand,
} from './common.js'
import { StdoutClosedError } from './stdout.js'

export interface SyncOptions extends GlobalOptions {
  readonly once?: boolean
}

export function sync(options: SyncOptions): Promise<number> {
  keepYoungGenerationSize()
  enableDeadBufferRelease()
  return runCommand(
    'sync',
    options,
    async (context) => {
      const failed = { shown: false }
      const code = await syncRun(options, context, failed)
      return context.stdout.error === undefined ? code : stoppedByStdout(context, failed.shown)
    },
    'stop',
  )
}

/** Syncs the pipeline(s); `failed.shown` tells whether a failure line went to stderr. */
async function syncRun(
  options: SyncOptions,
  context: CommandContext,
  failed: { shown: boolean },
): Promise<number> {
  const once = options.once === true
  // First: a bad address is refused before anything starts.
  const metrics = await startMetrics(
    options.metricsAddr ?? (context.file.env.SKIPPR_METRICS_ADDR || undefined),
  )
  const reporter = await reporterFor(options, context)
  const listener: SyncListener = (event) => {
    reporter.event(event)
    if (event.type === 'error') {
      context.err(`${failureLine('sync', event.cause)}\n`)
      markReported(event.cause)
      failed.shown = true
    }
  }
  const environment = {
    ...context,
    listener: metrics ? metrics.listening(listener) : listener,
    meter: metrics?.meter,
    announce: (line: string) => context.err(`[skippr] ${line}\n`),
    // A failure the run reported as it happened (its error event) is not said twice.
    pipelineFailed: (pipeline: string, error: unknown) => {
      if (isReported(error)) return
      context.err(`${failureLine(`sync of pipeline ${pipeline}`, error)}\n`)
      markReported(error)
      failed.shown = true
    },
  }
  try {
    const name = options.pipeline ?? (context.file.env.PIPELINE_NAME || undefined)
    if (name === undefined) {
      const failures = await syncEveryPipeline(environment, once)
      return failures === 0 ? EXIT_OK : EXIT_FAILURE
    }
    const pipeline = await resolvePipeline(environment, name, once)
    await syncPipeline(environment, pipeline, { once, honourFrequency: false })
    return EXIT_OK
  } finally {
    await reporter.close()
    await metrics?.close()
  }
}

/** The metrics endpoint when an address is given; its modules load only then. */
async function startMetrics(address: string | undefined) {
  if (address === undefined) return undefined
  const [{ parseMetricsAddress }, { SyncMetrics }, { serveMetrics }] = await Promise.all([
    import('../metrics/address.js'),
    import('../metrics/sync-metrics.js'),
    import('../metrics/server.js'),
  ])
  const metrics = new SyncMetrics()
  const server = await serveMetrics(metrics, parseMetricsAddress(address))
  return {
    listening:
      (listener: SyncListener): SyncListener =>
      (event) => {
        metrics.observe(event)
        listener(event)
      },
    meter: (pipeline: string) => metrics.meter(pipeline),
    close: () => server.close(),
  }
}

/**
 * A closed stdout stops the run as a signal would, and exits 1 whether or not the run got to its
 * end: its output is lost, and "retry later" is safe (a next run lands only what this one left).
 * One line on stderr, unless the run's failure already said why.
 */
function stoppedByStdout(context: CommandContext, failureShown: boolean): number {
  if (!failureShown) {
    const why = new StdoutClosedError(context.stdout.error as NodeJS.ErrnoException).message
    context.err(
      `[skippr] sync stopped: ${why}; batches committed and not landed stay in the WAL for the next run\n`,
    )
  }
  return EXIT_FAILURE
}

/** `json`; `progress` on a terminal, else `text`; `progress` with `--log` shows nothing (the logs do). */
async function reporterFor(options: SyncOptions, context: CommandContext): Promise<Reporter> {
  if (options.output === 'json') {
    const statusIntervalMs =
      envSeconds(context.file.env, 'SKIPPR_STATUS_INTERVAL_SECONDS', STATUS_INTERVAL_MS / 1000) * 1000
    return jsonReporter(context.out, { statusIntervalMs })
  }
  if (options.output === 'progress' && options.log) return silentReporter
  // A terminal that reports no width (e.g. a bare pty) cannot hold a redrawn display.
  if (options.output === 'text' || !process.stdout.isTTY || !process.stdout.columns)
    return textReporter(context.out)
  const { progressReporter } = await import('../output/progress.js')
  return progressReporter(context.out)
}
