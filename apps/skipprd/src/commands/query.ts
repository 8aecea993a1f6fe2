/**
 * `skipprd query`: SQL over the pipelines' WAL data (and a DuckDB data_sink's landed tables) and the
 * admin statements, from `--sql` or an interactive prompt. Never takes a writer lease (RESET and
 * DROP take it for the moment they run).
 */

import { render } from '../query/render.js'
import { QuerySession } from '../query/sql-session.js'
import { isBlank, splitStatements } from '../query/statements.js'
import { watch } from '../query/watch.js'
import { type CommandContext, EXIT_OK, type GlobalOptions, runCommand } from './common.js'
import { closedByReader } from './stdout.js'

export interface QueryOptions extends GlobalOptions {
  readonly sql?: string
  readonly plain?: boolean
  /** Seconds between rounds of `sql` (`--watch`); program.ts refuses it without `sql`. */
  readonly watch?: number
}

export function query(options: QueryOptions): Promise<number> {
  return runCommand('query', options, async (context) => {
    const session = await openSession(context)
    try {
      const plain = options.plain === true
      if (options.sql === undefined) {
        const { runRepl } = await import('../query/repl.js')
        const code = await runRepl(session, {
          input: process.stdin,
          output: process.stdout,
          plain,
          write: context.out,
          // The prompt reports a failed statement and goes on; a closed stdout is no statement's fault.
          error: (line) => {
            if (context.stdout.error === undefined) context.err(`${line}\n`)
          },
          env: context.file.env,
          stop: context.stop,
        })
        return readerGone(context) ? EXIT_OK : code
      }
      // Statements run in order; the first failure stops the rest and exits 1.
      const { complete, rest } = splitStatements(options.sql)
      const statements = isBlank(rest) ? complete : [...complete, rest.trim()]
      const round = async (): Promise<void> => {
        for (const statement of statements)
          await render(await session.execute(statement, { signal: context.stop }), plain, context.out)
      }
      if (options.watch === undefined) await round()
      else {
        await watch(round, {
          seconds: options.watch,
          sql: options.sql,
          stop: context.stop,
          terminal: process.stdout.isTTY === true,
          out: context.out,
        })
      }
      return EXIT_OK
    } finally {
      await session.close()
    }
  })
}

/** The reader of stdout went away (`| head`): what the command printed was enough for it. */
function readerGone(context: CommandContext): boolean {
  const error = context.stdout.error
  return error !== undefined && closedByReader(error)
}

export function openSession(context: CommandContext): Promise<QuerySession> {
  return QuerySession.open({
    file: context.file,
    flags: context.flags,
    cwd: context.cwd,
    warn: (message) => context.logger.warn(message),
    // With the rows it qualifies (rows missing from the answer), so on stderr as well as in the log.
    notice: (message) => {
      context.logger.warn(message)
      context.err(`[skippr] ${message}\n`)
    },
    logger: context.logger,
    onSecrets: (secrets) => context.redactor.add(secrets),
  })
}
