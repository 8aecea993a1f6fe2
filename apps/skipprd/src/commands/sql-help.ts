/**
 * `skipprd sql-help [--command <statement>] [--format md|html|json]`: the statements `skipprd
 * query` takes, with syntax, what each does and an example (query/statement-docs.ts), without a
 * config file. An unknown `--command` is a bad command line naming the statements there are.
 */
import { type DocFormat, renderDocs, STATEMENT_DOCS, statementDoc } from '../query/statement-docs.js'
import { EXIT_OK, EXIT_USAGE } from './common.js'

export interface SqlHelpOptions {
  readonly command?: string
  readonly format: DocFormat
}

export function sqlHelp(options: SqlHelpOptions): number {
  const docs = options.command === undefined ? STATEMENT_DOCS : [statementDoc(options.command)]
  if (docs.some((doc) => doc === undefined)) {
    const known = STATEMENT_DOCS.map((doc) => doc.command).join(', ')
    process.stderr.write(
      `[skippr] sql-help: no statement '${options.command}': the statements are ${known}\n`,
    )
    return EXIT_USAGE
  }
  process.stdout.write(renderDocs(docs as typeof STATEMENT_DOCS, options.format))
  return EXIT_OK
}
