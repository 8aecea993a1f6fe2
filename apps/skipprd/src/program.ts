/**
 * The `skipprd` commands and options (commander). Each command imports its code (and through it
 * the connectors, DuckDB, pg, lmdb) only when it runs.
 * Exit codes: 0 success, 1 failure, 2 bad command line.
 */
import { createRequire } from 'node:module'
import { Command, CommanderError, Option } from 'commander'
import { DEFAULT_ROUNDS, DEFAULT_ROWS, positiveCount } from './benchmark/options.js'
import { DOC_FORMATS, type DocFormat } from './query/statement-docs.js'
import { watchSeconds } from './query/watch.js'

const EXIT_USAGE = 2
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error']

const { version } = createRequire(import.meta.url)('../package.json') as { version: string }

/**
 * Help is wrapped at a fixed width, whatever the terminal: `skipprd --help` prints the text
 * build-help.ts wrote with this program, and every other help must look the same.
 */
export const HELP_WIDTH = 80

export const program = new Command('skipprd')
  .description('Move data from sources to destinations through a durable write-ahead log.')
  .version(version, '-V, --version', 'Print the version')
  .helpOption('-h, --help', 'Show help')
  .option('-p, --pipeline <NAME>', 'Pipeline to run (default: PIPELINE_NAME; without either, every pipeline)')
  .addOption(
    new Option(
      '--output <MODE>',
      'progress: live display on a terminal; text: one line per event; json: one object per line',
    )
      .choices(['progress', 'text', 'json'])
      .default('progress'),
  )
  .option('--config <PATH>', 'Config file (default: SKIPPR_CONFIG_FILE, else ./skippr.yml or ./skippr.yaml)')
  .addOption(
    new Option('--log [LEVEL]', 'Print logs to stderr (alone: info); hides the progress display').choices(
      LOG_LEVELS,
    ),
  )
  .option(
    '--wal-storage <MODE>',
    'WAL backend: disk (default), s3 or clustered (default: WAL_STORAGE); clustered: this node at SKIPPR_CLUSTER_LISTEN (host:port), the others in SKIPPR_CLUSTER_PEERS (host:port or id=host:port, comma-separated), SKIPPR_CLUSTER_SECRET, optional SKIPPR_CLUSTER_NODE_ID',
  )
  .option(
    '--wal-s3-bucket <BUCKET>',
    'WAL bucket for --wal-storage s3, when skippr.yml does not set skippr.wal_s3_bucket',
  )
  .option(
    '--store-type <TYPE>',
    'State store, when skippr.yml does not set skippr.store.type (default: sled)',
  )
  .option('--store-name <NAME>', 'Table name for the dynamodb state store')
  .option('--create-store', "Create the dynamodb state store's table when it is missing")
  // The vendor's workspace flags: `connect` writes them into skippr.yml's `skippr:` section; every
  // other command takes them and reads that section instead, as the vendor's CLI does.
  .option('--workspace <NAME>', 'connect: write skippr.workspace (other commands read skippr.yml)')
  .option('--tenant <ID>', 'connect: write skippr.tenant (other commands read skippr.yml)')
  .option('--storage-mode <MODE>', 'connect: write skippr.storage_mode (other commands read skippr.yml)')
  .option(
    '--skippr-s3-bucket <BUCKET>',
    'connect: write skippr.wal_s3_bucket (other commands read skippr.yml)',
  )
  .option(
    '--metrics-addr <ADDR>',
    'sync: serve /metrics and /healthz on this port (127.0.0.1) or host:port (default: SKIPPR_METRICS_ADDR)',
  )
  .configureHelp({ showGlobalOptions: true, helpWidth: HELP_WIDTH })
  // Before the commands: they inherit it.
  .configureOutput({ outputError: (message, write) => write(usageLine(message)) })
  .exitOverride()

program
  .command('sync')
  .description('Read new records from the source, commit them to the WAL and land them in the destination')
  .option('--once', 'Read what the source has now, land it, and exit (default: run until stopped)')
  .exitOverride()
  .action(async (_options: object, command: Command) => {
    const { sync } = await import('./commands/sync.js')
    process.exitCode = await sync(command.optsWithGlobals())
  })

program
  .command('discover')
  .description("Read the source's namespaces and schemas and save them")
  .exitOverride()
  .action(async (_options: object, command: Command) => {
    const { discover } = await import('./commands/discover.js')
    process.exitCode = await discover(command.optsWithGlobals())
  })

program
  .command('query')
  .description("Run SQL over the pipelines' WAL data (tables <pipeline>.<namespace>) and admin statements")
  .option('-s, --sql <SQL>', 'Statements to run (default: an interactive sql> prompt)')
  .option('--plain', 'Print {"header":[...],"rows":[[...]]} with every value a string')
  .addOption(
    new Option(
      '--watch <SECONDS>',
      'Run --sql again every SECONDS over fresh WAL data, until Ctrl-C',
    ).argParser(watchSeconds),
  )
  .exitOverride()
  .action(async (options: { sql?: string; watch?: number }, command: Command) => {
    if (options.watch !== undefined && options.sql === undefined) {
      command.error("error: option '--watch <SECONDS>' needs --sql: the statements to run again")
    }
    const { query } = await import('./commands/query.js')
    process.exitCode = await query(command.optsWithGlobals())
  })

program
  .command('df')
  .description('Print a pipeline\'s WAL data as {"header":[...],"rows":[[...]]}')
  .option('--namespace <NAME>', 'Only this namespace (default: all, which must have the same columns)')
  .exitOverride()
  .action(async (_options: object, command: Command) => {
    const { df } = await import('./commands/df.js')
    process.exitCode = await df(command.optsWithGlobals())
  })

program
  .command('doctor')
  .description(
    'Check what a sync needs: config, env, connector packages, connections, data dir, WAL, lease, state',
  )
  .exitOverride()
  .action(async (_options: object, command: Command) => {
    const { doctor } = await import('./commands/doctor.js')
    process.exitCode = await doctor(command.optsWithGlobals())
  })

program
  .command('verify')
  .description("Compare a pipeline's rows in the source with the destination, the WAL and the deadletters")
  .exitOverride()
  .action(async (_options: object, command: Command) => {
    const { verify } = await import('./commands/verify.js')
    process.exitCode = await verify(command.optsWithGlobals())
  })

program
  .command('connect')
  .description('Add or update a connector entry in skippr.yml and point a pipeline at it')
  .argument('<direction>', 'data-source or data-sink')
  .argument('<kind>', 'Connector type, e.g. postgres or duckdb')
  .option('--name <NAME>', 'Name of the entry under data_sources / data_sinks')
  .addHelpText(
    'after',
    `\nConnector fields are flags named after their YAML keys, '-' for '_': --path ./w.duckdb --tables '[orders]'.\n` +
      `A secret field takes a reference, --connection-string '\${DB_URL}', never the secret itself.`,
  )
  .allowUnknownOption()
  .allowExcessArguments()
  .exitOverride()
  .action(async (direction: string, kind: string, _options: object, command: Command) => {
    const { connect } = await import('./commands/connect.js')
    process.exitCode = await connect(direction, kind, command.args.slice(2), command.optsWithGlobals())
  })

const metadata = program
  .command('metadata')
  .description('Show or replace a pipeline\'s saved schemas ({"fields":[{"name","field_type","nullable"}]})')
  .exitOverride()

metadata
  .command('show')
  .description('Print the saved schema of every namespace, or of one')
  .option('--namespace <NAME>', 'Only this namespace: prints {"fields":[...]}')
  .exitOverride()
  .action(async (_options: object, command: Command) => {
    const { metadataShow } = await import('./commands/metadata.js')
    process.exitCode = await metadataShow(command.optsWithGlobals())
  })

metadata
  .command('apply')
  .description(
    "Replace a namespace's field list, saved as its next schema version; the next sync reads by it",
  )
  .option('--namespace <NAME>', 'The namespace to change')
  .option('--schema <FILE>', 'Schema file, or - for stdin')
  .option('--schema-json <JSON>', 'The schema as JSON text')
  .exitOverride()
  .action(async (_options: object, command: Command) => {
    const { metadataApply } = await import('./commands/metadata.js')
    process.exitCode = await metadataApply(command.optsWithGlobals())
  })

program
  .command('schema')
  .description("Print the JSON Schema of skippr.yml (every bundled connector's fields), for editors")
  .exitOverride()
  .action(async () => {
    const { readFile } = await import('node:fs/promises')
    // dist/ and bin/ both sit beside the file, so the path means the same in either.
    process.stdout.write(await readFile(new URL('../skippr.schema.json', import.meta.url), 'utf8'))
  })

program
  .command('benchmark')
  .description(
    "Load the sample dataset into a data_sinks entry by skipprd and by the destination's own bulk load; print both rates and their ratio",
  )
  .requiredOption(
    '--sink <NAME>',
    'The data_sinks entry to load into (its tables are made for the benchmark and dropped)',
  )
  .addOption(
    new Option('--rows <N>', 'Rows of the bikehire CSV file')
      .argParser(positiveCount)
      .default(DEFAULT_ROWS, '1,000,000'),
  )
  .addOption(
    new Option('--rounds <R>', 'Rounds of the two loads; medians are shown')
      .argParser(positiveCount)
      .default(DEFAULT_ROUNDS),
  )
  .exitOverride()
  .action(async (_options: object, command: Command) => {
    const { benchmark } = await import('./commands/benchmark.js')
    process.exitCode = await benchmark(command.optsWithGlobals())
  })

program
  .command('sql-help')
  .description('Print the statements skipprd query takes: syntax, what each does, an example')
  .option('--command <STATEMENT>', 'Only this statement, e.g. "SHOW PIPELINE" (any case)')
  .addOption(new Option('--format <FORMAT>', 'md, html or json').choices(DOC_FORMATS).default('md'))
  .exitOverride()
  .action(async (options: { command?: string; format: DocFormat }) => {
    const { sqlHelp } = await import('./commands/sql-help.js')
    process.exitCode = sqlHelp(options)
  })

program
  .command('serve')
  .description("Not in this build: the vendor's Iceberg REST and Flight SQL server")
  .exitOverride()
  .action(() => {
    process.stderr.write(
      '[skippr] serve is not in this build (the Iceberg REST catalog and Flight SQL server are out of scope): read pipelines with skipprd query or skipprd df\n',
    )
    process.exitCode = 1
  })

/** A bad command line is one line on stderr: commander's message (and its suggestion), and where help is. */
function usageLine(message: string): string {
  return `${message.trim().split('\n').join(' ')} (run skipprd --help for usage)\n`
}

/**
 * `--log` takes a level only when one follows it. Commander would take any next word as the
 * value, so `skipprd --log sync` would ask for a level named sync: a command name right after
 * `--log` is `--log` alone (info), as the README promises. Any other word is left to commander,
 * which refuses one that is no level.
 */
function bareLogBeforeCommand(args: readonly string[]): string[] {
  const commands = new Set(['help', ...program.commands.map((command) => command.name())])
  const end = args.indexOf('--')
  return args.map((arg, i) =>
    arg === '--log' && (end === -1 || i < end) && commands.has(args[i + 1] ?? '') ? '--log=info' : arg,
  )
}

/** Runs the command line `argv` (as process.argv) and returns the exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  try {
    await program.parseAsync(bareLogBeforeCommand(argv.slice(2)), { from: 'user' })
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error
    // --help and --version end with exit code 0; any other commander error (including no command at
    // all, which prints the help) is a bad command line.
    process.exitCode = error.exitCode === 0 ? 0 : EXIT_USAGE
  }
  return Number(process.exitCode ?? 0)
}
