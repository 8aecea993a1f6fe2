/**
 * The interactive `sql>` prompt. A statement runs when a line ends it with `;` (it may span lines;
 * the prompt shows `...>` meanwhile). `:q`, `exit`, `quit` or Ctrl-D leave; Ctrl-C drops the
 * statement being typed. Lines are kept in a history file (arrow keys recall them across sessions).
 *
 * Without a terminal (a script piped in) there is no prompt, statements run as they complete, and
 * the first failure ends the run with exit code 1.
 */
import { appendFileSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { makeDirectorySync } from '@skippr/connector-api'
import { render, type Write } from './render.js'
import type { QuerySession } from './sql-session.js'
import { isBlank, splitStatements } from './statements.js'

const PROMPT = 'sql> '
const CONTINUE = '...> '
const HISTORY_SIZE = 1000
const QUIT = new Set([':q', 'exit', 'quit', '\\q'])

export interface ReplOptions {
  readonly input: NodeJS.ReadableStream & { isTTY?: boolean }
  readonly output: NodeJS.WritableStream
  readonly plain: boolean
  /** Results. */
  readonly write: Write
  /** Errors, one line each. */
  readonly error: (line: string) => void
  readonly env: Readonly<Record<string, string | undefined>>
  /** The command's SIGINT/SIGTERM: ends a running STREAM (at the prompt, Ctrl-C does too). */
  readonly stop?: AbortSignal
}

/** Runs until the user quits; resolves with the exit code. */
export async function runRepl(session: QuerySession, options: ReplOptions): Promise<number> {
  const interactive = options.input.isTTY === true
  const historyFile = options.env.SKIPPR_HISTORY_FILE || path.join(homedir(), '.skipprd_history')
  const rl = createInterface({
    input: options.input,
    output: options.output,
    terminal: interactive,
    history: interactive ? loadHistory(historyFile) : [],
    historySize: HISTORY_SIZE,
    removeHistoryDuplicates: true,
  })
  let buffer = ''
  const prompt = (): void => {
    if (!interactive) return
    rl.setPrompt(isBlank(buffer) ? PROMPT : CONTINUE)
    rl.prompt()
  }
  /** Aborted by Ctrl-C while a statement runs: it ends a STREAM and the prompt comes back. */
  let running: AbortController | undefined
  rl.on('SIGINT', () => {
    if (running) return running.abort()
    buffer = ''
    options.output.write('^C\n')
    prompt()
  })

  const run = async (statement: string): Promise<boolean> => {
    running = new AbortController()
    const signal = options.stop ? AbortSignal.any([running.signal, options.stop]) : running.signal
    try {
      await render(await session.execute(statement, { signal }), options.plain, options.write)
      return true
    } catch (error) {
      options.error(`Error: ${error instanceof Error ? error.message : String(error)}`)
      return interactive
    } finally {
      running = undefined
    }
  }

  prompt()
  try {
    for await (const line of rl) {
      if (isBlank(buffer) && QUIT.has(line.trim().replace(/;$/, '').toLowerCase())) return 0
      if (interactive && line.trim() !== '') saveHistory(historyFile, line)
      buffer = buffer === '' ? line : `${buffer}\n${line}`
      const { complete, rest } = splitStatements(buffer)
      buffer = isBlank(rest) ? '' : rest
      for (const statement of complete) if (!(await run(statement))) return 1
      prompt()
    }
    // End of input (Ctrl-D, or the end of a piped script): run what is left.
    if (!isBlank(buffer) && !(await run(buffer))) return 1
    if (interactive) options.output.write('\n')
    return 0
  } finally {
    rl.close()
  }
}

/** Most recent first, as readline wants it. */
function loadHistory(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).reverse().slice(0, HISTORY_SIZE)
  } catch {
    return []
  }
}

function saveHistory(file: string, line: string): void {
  try {
    makeDirectorySync(path.dirname(file))
    appendFileSync(file, `${line.replaceAll('\n', ' ')}\n`)
  } catch {
    // History is a convenience: a read-only home directory must not stop the prompt.
  }
}
