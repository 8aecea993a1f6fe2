/**
 * `--output progress`: a live terminal display (listr2) of each run's phases, with rows read and
 * written, bytes and rate per namespace. Chosen only when stdout is a terminal; otherwise the
 * command falls back to `text`.
 */
import { type DefaultRenderer, Listr, type ListrTaskWrapper, type SimpleRenderer } from 'listr2'
import type { Phase, RunProgress } from '../runner/events.js'
import { formatBytes } from './bytes.js'
import type { Reporter } from './reporter.js'
import { textLine } from './text.js'

const REFRESH_MS = 200
const PHASES: readonly Phase[] = ['Ingesting', 'Finalising']

interface Deferred {
  promise: Promise<void>
  resolve(): void
  reject(error: Error): void
}

export function progressReporter(write: (text: string) => void): Reporter {
  let run: { progress: RunProgress; phases: Map<Phase, Deferred> } | undefined
  let display: Promise<void> = Promise.resolve()

  const start = (pipeline: string, progress: RunProgress): void => {
    const phases = new Map(PHASES.map((phase) => [phase, deferred()]))
    run = { progress, phases }
    const list = new Listr<unknown, 'default', 'simple'>(
      PHASES.map((phase) => ({
        title: phase,
        task: (_: unknown, task: PhaseTask) =>
          follow(task, phase, progress, (phases.get(phase) as Deferred).promise),
      })),
      {
        concurrent: false,
        exitOnError: true,
        // SIGINT/SIGTERM stop the run cleanly (runCommand); listr2's own handler would exit at once.
        registerSignalListeners: false,
        rendererOptions: { collapseErrors: false },
      },
    )
    display = display.then(() => {
      write(`Sync started: pipeline=${pipeline}\n`)
      return list.run().then(
        () => undefined,
        () => undefined,
      )
    })
  }

  return {
    event(event) {
      if (event.type === 'start') return start(event.pipeline, event.progress)
      if (event.type === 'phase' && event.state === 'done') return run?.phases.get(event.phase)?.resolve()
      if (event.type === 'error') {
        for (const phase of run?.phases.values() ?? []) phase.reject(new Error(event.error))
        return
      }
      const line = textLine(event)
      if (event.type === 'complete') for (const phase of run?.phases.values() ?? []) phase.resolve()
      if (line !== undefined && event.type !== 'phase') display = display.then(() => write(`${line}\n`))
    },
    close: () => display,
  }
}

type PhaseTask = ListrTaskWrapper<unknown, typeof DefaultRenderer, typeof SimpleRenderer>

async function follow(
  task: PhaseTask,
  phase: Phase,
  progress: RunProgress,
  done: Promise<void>,
): Promise<void> {
  // One multi-line title, redrawn in place: the phase's totals, then a line per namespace.
  const render = (): void => {
    task.title = [
      `${phase}  ${summary(progress)}`,
      ...namespaceLines(progress).map((line) => `  ${line}`),
    ].join('\n')
  }
  render()
  const timer = setInterval(render, REFRESH_MS)
  try {
    await done
  } finally {
    clearInterval(timer)
    render()
  }
}

function summary(progress: RunProgress): string {
  const seconds = Math.max(progress.elapsedMs() / 1000, 0.001)
  return [
    `${count(progress.rowsRead)} rows read`,
    formatBytes(progress.bytesRead),
    `${count(progress.rowsWritten)} written`,
    ...(progress.deadletterRows > 0 ? [deadletters(progress.deadletterRows, progress.discarded)] : []),
    `${count(Math.round(progress.rowsRead / seconds))} rows/s`,
  ].join(' · ')
}

function deadletters(rows: number, discarded: number): string {
  return discarded > 0
    ? `${count(rows)} deadletters (${count(discarded)} discarded)`
    : `${count(rows)} deadletters`
}

function namespaceLines(progress: RunProgress): string[] {
  const seconds = Math.max(progress.elapsedMs() / 1000, 0.001)
  return [...progress.namespaces].map(
    ([namespace, c]) =>
      `${namespace}: ${count(c.rowsRead)} read (${formatBytes(c.bytesRead)}), ${count(c.rowsWritten)} written, ${count(Math.round(c.rowsRead / seconds))} rows/s`,
  )
}

function count(n: number): string {
  return n.toLocaleString('en-US')
}

function deferred(): Deferred {
  let resolve!: () => void
  let reject!: (error: Error) => void
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  // A phase that never started still holds a rejected promise: nobody awaits it then.
  promise.catch(() => {})
  return { promise, resolve, reject }
}
