/**
 * A protocol-level fake of Snowflake for tests of the Snowflake sink through the official
 * `snowflake-sdk`: the REST subset the SDK uses (login-request, query-request with JSON results,
 * PUT through the SDK's LOCAL_FS stage type, telemetry, session delete), with the SQL run on an
 * embedded DuckDB (a database is an attached DuckDB catalog, each session its own connection, so
 * transactions are the session's). It reproduces what an exactly-once sink relies on: COPY load
 * metadata (a file already loaded into a table is skipped), a resent requestId answered with the
 * first answer, and a fault hook that loses the response of a statement that committed. See the
 * README for what it does not do.
 */
import { createHash, randomUUID, verify } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type IncomingMessage } from 'node:http'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api'
import { serveOnLoopback } from './in-process-server.js'
import { countKinds } from './request-counts.js'
import { type CopyError, copyFile, type TableColumn } from './snowflake-copy.js'
import {
  type Binding,
  bindValues,
  type Command,
  parseStatement,
  SqlError,
  type StagePath,
  snowflakeType,
  unquote,
} from './snowflake-sql.js'

export interface FakeSnowflakeOptions {
  /** The account name the SDK is given (default `skippr_test`). */
  readonly account?: string
  readonly username?: string
  readonly password?: string
  /** A PEM public key: key-pair logins (SNOWFLAKE_JWT) must be signed by its private key. */
  readonly publicKey?: string
  /** The database there is (default `SKIPPR_TEST`, with schema `PUBLIC`). */
  readonly database?: string
  /** The warehouses there are (default `SKIPPR_WH`). */
  readonly warehouses?: readonly string[]
  /**
   * A DuckDB file for the database (attached under its name, schema `PUBLIC`), e.g. for a harness
   * to read after stop() (default in memory).
   */
  readonly path?: string
  /**
   * How long a transaction whose session has gone quiet may block another's write before it is
   * rolled back (Snowflake's rule for a client that is gone: 5 minutes, the default).
   */
  readonly detachedTransactionMs?: number
}

export interface FakeSnowflake {
  /** `http://127.0.0.1:<port>`: the SDK's `accessUrl`. */
  readonly accessUrl: string
  readonly account: string
  readonly username: string
  readonly password: string
  readonly database: string
  readonly warehouse: string
  /** Every request's path and, for queries, its SQL text, in order: for round-trip counts. */
  readonly requests: string[]
  /** How many requests of each kind so far (`login`, `query COPY`, `query PUT`, …), from `requests`. */
  requestCounts(): Record<string, number>
  /** Every row of `schema.table` of the database as DuckDB gives it (bigint, Date, JSON text). */
  rows(schema: string, table: string): Promise<Record<string, unknown>[]>
  /** The names of the files in the stages (every stage): what a sink left behind. */
  stagedFiles(): string[]
  /** The next query whose SQL matches `match` runs (and commits), then its connection is dropped. */
  dropResponseAfterCommit(match: RegExp): void
  /**
   * The next query whose SQL matches `match` runs, and its answer is never sent: the client waits
   * in the middle of what it is doing, e.g. for a test to kill it there.
   */
  holdResponse(match: RegExp): void
  /** Every session token expires (390112): the SDK renews it with the master token and goes on. */
  expireSessions(): void
  /** Forgets the load metadata, as Snowflake does after 64 days. */
  forgetLoadHistory(): void
  /**
   * From now on, a copy of every staged file a COPY loads (as staged, gzip) goes to `dir`, named
   * `<6-digit order>-<file name>`, for a bench to load the very same files again; undefined stops it.
   */
  captureLoads(dir: string | undefined): void
  /** Runs DuckDB SQL directly, for a test's own setup. */
  sql(statement: string): Promise<void>
  stop(): Promise<void>
}

interface Session {
  /** Snowflake's session id (a number), as login answers it and SHOW TRANSACTIONS lists it. */
  readonly id: string
  readonly conn: DuckDBConnection
  readonly warehouse: string | undefined
  readonly database: string
  readonly schema: string
  inTransaction: boolean
  /** The open transaction's id, name (BEGIN NAME, else a UUID) and start, for SHOW TRANSACTIONS. */
  transaction: { readonly id: string; readonly name: string; readonly startedOn: string } | undefined
  /** Whether the open transaction has written (holds Snowflake's locks). */
  wrote: boolean
  /** Whether a query of the session is running, and since when it has been quiet. */
  busy: boolean
  idleSince: number
  /** Files loaded by this session's open transaction: table → file keys, recorded at COMMIT. */
  pendingLoads: [string, string][]
}

interface Result {
  readonly rowtype: { name: string; type: string; scale?: number; precision?: number; nullable: boolean }[]
  readonly rowset: (string | null)[][]
  readonly extra?: Record<string, unknown>
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`
const quoteText = (text: string) => `'${text.replaceAll("'", "''")}'`
const text = (names: string[], rows: (string | null)[][]): Result => ({
  rowtype: names.map((name) => ({ name, type: 'text', nullable: true })),
  rowset: rows,
})

/** Statements that need a running warehouse in Snowflake (DDL and transaction control do not). */
const NEEDS_WAREHOUSE = /^\s*(SELECT|INSERT|UPDATE|DELETE|MERGE|COPY)\b/i
/** Statements that take Snowflake's table locks. */
const WRITES = /^\s*(INSERT|UPDATE|DELETE|MERGE|COPY)\b/i
const DETACHED_TRANSACTION_MS = 5 * 60_000
const LOCK_POLL_MS = 50

export async function startFakeSnowflake(options: FakeSnowflakeOptions = {}): Promise<FakeSnowflake> {
  const account = options.account ?? 'skippr_test'
  const username = options.username ?? 'skippr'
  const password = options.password ?? 'fake-password'
  const database = (options.database ?? 'SKIPPR_TEST').toUpperCase()
  const warehouses = (options.warehouses ?? ['SKIPPR_WH']).map((w) => w.toUpperCase())
  const { DuckDBInstance } = await import('@duckdb/node-api')
  const instance: DuckDBInstance = await DuckDBInstance.create(':memory:')
  const admin = await instance.connect()
  await admin.run(`ATTACH ${quoteText(options.path ?? ':memory:')} AS ${quoteIdent(database)}`)
  await admin.run(`CREATE SCHEMA ${quoteIdent(database)}."PUBLIC"`)
  const stageRoot = await mkdtemp(join(tmpdir(), 'skippr-fake-snowflake-'))
  const sessions = new Map<string, Session>()
  /** requestId → the answer of its first run: a resend is answered with it, never run again. */
  const answers = new Map<string, Promise<unknown>>()
  /** Table (DuckDB name) → `file name:md5` of every file loaded into it. */
  const loaded = new Map<string, Set<string>>()
  /** Master token → the session token it renews; session tokens past their validity. */
  const masterTokens = new Map<string, string>()
  const expired = new Set<string>()
  const requests: string[] = []
  const dropAfterCommit: RegExp[] = []
  const holdAnswer: RegExp[] = []
  /** The last transaction id given out: Snowflake's ids are numbers that grow. */
  let lastTransactionId = BigInt(Date.now()) * 1000n
  /** Where loaded files are copied to (captureLoads), and how many so far. */
  let captureDir: string | undefined
  let captured = 0

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake')
      let body = Buffer.concat(chunks)
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body)
      const json = body.length > 0 ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {}
      const sqlText = typeof json.sqlText === 'string' ? json.sqlText : ''
      requests.push(sqlText ? `${url.pathname} ${sqlText}` : url.pathname)
      const drop = sqlText ? dropAfterCommit.findIndex((m) => m.test(sqlText)) : -1
      if (drop >= 0) dropAfterCommit.splice(drop, 1)
      const hold = sqlText ? holdAnswer.findIndex((m) => m.test(sqlText)) : -1
      if (hold >= 0) holdAnswer.splice(hold, 1)
      const requestId = url.searchParams.get('requestId')
      let answer: Promise<unknown>
      // Only a request that ran is remembered: one refused for its token is resent after renewal.
      const token = /Snowflake Token="([^"]*)"/.exec(req.headers.authorization ?? '')?.[1] ?? ''
      const runs = sessions.has(token) && !expired.has(token)
      if (url.pathname === '/queries/v1/query-request' && requestId && runs) {
        answer = answers.get(requestId) ?? handle(req, url, json)
        answers.set(requestId, answer)
      } else answer = handle(req, url, json)
      answer.then((out) => {
        if (hold >= 0) return
        if (drop >= 0) return req.socket.destroy()
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify(out))
      })
    })
  })

  async function handle(req: IncomingMessage, url: URL, json: Record<string, unknown>): Promise<unknown> {
    try {
      if (url.pathname === '/session/v1/login-request') return await login(url, json)
      const token = /Snowflake Token="([^"]*)"/.exec(req.headers.authorization ?? '')?.[1] ?? ''
      if (url.pathname === '/session/token-request') return renew(token, json)
      if (expired.has(token)) return { success: false, code: '390112', message: 'Session token has expired.' }
      const session = sessions.get(token)
      if (!session) return { success: false, code: '390111', message: 'Session no longer exists.' }
      if (url.pathname === '/telemetry/send') return { success: true, data: {} }
      if (url.pathname === '/session' && url.searchParams.get('delete') === 'true') {
        sessions.delete(token)
        await rollbackTransaction(session)
        session.conn.closeSync()
        return { success: true, data: {} }
      }
      if (url.pathname === '/queries/v1/query-request') {
        session.busy = true
        const result = await query(
          session,
          bindValues(String(json.sqlText ?? ''), json.bindings as Record<string, Binding> | undefined),
        ).finally(() => {
          session.busy = false
          session.idleSince = Date.now()
        })
        return {
          success: true,
          data: {
            queryId: randomUUID(),
            queryResultFormat: 'json',
            rowtype: result.rowtype,
            rowset: result.rowset,
            total: result.rowset.length,
            returned: result.rowset.length,
            parameters: [],
            finalDatabaseName: session.database,
            finalSchemaName: session.schema,
            ...result.extra,
          },
        }
      }
      return { success: false, code: '390400', message: `the fake Snowflake does not serve ${url.pathname}` }
    } catch (error) {
      const failure =
        error instanceof SqlError
          ? error
          : new SqlError('000603', 'XX000', `SQL execution internal error: ${String(error)}`)
      return {
        success: false,
        code: failure.code,
        message: failure.message,
        data: { sqlState: failure.sqlState, queryId: randomUUID(), errorCode: failure.code },
      }
    }
  }

  /** A new session token for the session of `masterToken` (the SDK's answer to 390112). */
  function renew(masterToken: string, json: Record<string, unknown>): unknown {
    const old = String(json.oldSessionToken ?? '')
    const session = sessions.get(old)
    if (masterTokens.get(masterToken) !== old || !session)
      return { success: false, code: '390114', message: 'Master token has expired.' }
    const token = randomUUID()
    sessions.delete(old)
    expired.delete(old)
    sessions.set(token, session)
    masterTokens.set(masterToken, token)
    return {
      success: true,
      data: { sessionToken: token, masterToken, validityInSecondsST: 3600, validityInSecondsMT: 14400 },
    }
  }

  async function login(url: URL, json: Record<string, unknown>): Promise<unknown> {
    const data = (json.data ?? {}) as Record<string, unknown>
    const refused = {
      success: false,
      code: '390100',
      message: 'Incorrect username or password was specified.',
      data: null,
    }
    if (String(data.ACCOUNT_NAME ?? '').toLowerCase() !== account.toLowerCase()) return refused
    if (String(data.LOGIN_NAME ?? '').toLowerCase() !== username.toLowerCase()) return refused
    if (data.AUTHENTICATOR === 'SNOWFLAKE_JWT') {
      if (!options.publicKey || !validJwt(String(data.TOKEN ?? ''), options.publicKey))
        return { ...refused, code: '390144', message: 'JWT token is invalid.' }
    } else if (data.PASSWORD !== password) return refused
    const askedWarehouse = url.searchParams.get('warehouse')?.toUpperCase()
    const schema = (url.searchParams.get('schemaName') ?? 'PUBLIC').toUpperCase()
    const token = randomUUID()
    const conn = await instance.connect()
    await conn.run("SET TimeZone = 'UTC'")
    // Unqualified names resolve in the session's database and schema, as Snowflake's do.
    await conn.run(`USE ${quoteIdent(database)}.${quoteIdent(schema)}`).catch(() => {})
    const sessionId = String(1_000_000 + sessions.size + Math.floor(Math.random() * 1e9))
    sessions.set(token, {
      id: sessionId,
      conn,
      warehouse: askedWarehouse && warehouses.includes(askedWarehouse) ? askedWarehouse : undefined,
      database,
      schema,
      inTransaction: false,
      transaction: undefined,
      wrote: false,
      busy: false,
      idleSince: Date.now(),
      pendingLoads: [],
    })
    const masterToken = randomUUID()
    masterTokens.set(masterToken, token)
    return {
      success: true,
      data: {
        token,
        masterToken,
        validityInSeconds: 3600,
        masterValidityInSeconds: 14400,
        sessionId: Number(sessionId),
        parameters: [],
        sessionInfo: { databaseName: database, schemaName: schema, warehouseName: askedWarehouse ?? null },
      },
    }
  }

  async function query(session: Session, sqlText: string): Promise<Result> {
    const command = parseStatement(sqlText)
    if (NEEDS_WAREHOUSE.test(sqlText) && command.kind !== 'current-warehouse' && !session.warehouse)
      throw new SqlError(
        '000606',
        '57P03',
        "No active warehouse selected in the current session.  Select an active warehouse with the 'use warehouse' command.",
      )
    if (WRITES.test(sqlText)) {
      await awaitDetachedTransactions(session)
      if (session.inTransaction) session.wrote = true
    }
    return run(session, command)
  }

  /**
   * Snowflake makes a write wait for the locks of another open transaction, and rolls back one
   * whose client is gone once it has blocked a write and been idle for 5 minutes (its "Aborting
   * transactions"). DuckDB would fail the write at once on a conflict, so a write first waits for
   * every quiet transaction that wrote to end, or rolls it back once quiet that long. A session
   * with a query running is waited for only by one whose transaction holds no locks yet (it cannot
   * be waiting for that one, so no wait goes round): the first UPDATE of a writer's transaction
   * waits for another writer's COMMIT, as Snowflake's lock on the row makes it.
   */
  async function awaitDetachedTransactions(session: Session): Promise<void> {
    const detachedMs = options.detachedTransactionMs ?? DETACHED_TRANSACTION_MS
    for (;;) {
      const holders = [...sessions.values()].filter(
        (other) => other !== session && other.inTransaction && other.wrote,
      )
      const quiet = holders.filter((other) => !other.busy)
      const blocking = session.wrote ? quiet : holders
      if (blocking.length === 0) return
      for (const other of quiet.filter((o) => Date.now() - o.idleSince >= detachedMs))
        await rollbackTransaction(other)
      await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS))
    }
  }

  async function run(session: Session, command: Command): Promise<Result> {
    switch (command.kind) {
      case 'alter-session':
        return text(['status'], [['Statement executed successfully.']])
      case 'begin':
        return begin(session, command.name)
      case 'show-transactions':
        return showTransactions()
      case 'current-session':
        return text(['CURRENT_SESSION()'], [[session.id]])
      case 'abort':
        return command.what === 'SESSION' ? abortSession(command.id) : abortTransaction(command.id)
      case 'current-warehouse':
        return text(['CURRENT_WAREHOUSE()'], [[session.warehouse ?? null]])
      case 'put':
        return put(session, command.file, command.target)
      case 'remove': {
        const dir = stageDir(session, command.target.stage)
        const removed: (string | null)[][] = []
        if (existsSync(dir))
          for (const name of readdirSync(dir, { recursive: true }) as string[])
            if (name.startsWith(command.target.path) && !name.endsWith('/')) {
              rmSync(join(dir, name), { force: true, recursive: true })
              removed.push([name, 'removed'])
            }
        return text(['name', 'result'], removed)
      }
      case 'describe': {
        const columns = await columnsOf(session, command.table)
        return text(
          ['name', 'type', 'kind', 'null?'],
          columns.map((c) => [c.name, snowflakeType(c.duckType), 'COLUMN', 'Y']),
        )
      }
      case 'copy':
        return copy(session, command)
      case 'sql':
        return sql(session, command.sql)
    }
  }

  async function sql(session: Session, statement: string): Promise<Result> {
    const verb = /^\s*(\w+)/.exec(statement)?.[1]?.toUpperCase()
    try {
      const reader = await session.conn.runAndReadAll(statement)
      if (verb === 'COMMIT') {
        for (const [table, key] of session.pendingLoads) loadedInto(table).add(key)
        forgetTransaction(session)
      }
      if (verb === 'ROLLBACK') forgetTransaction(session)
      const names = reader.columnNames()
      const types = reader.columnTypes().map((t) => t.toString())
      const rows = reader
        .getRowsJson()
        .map((row) =>
          row.map((v) => (v === null ? null : typeof v === 'object' ? JSON.stringify(v) : String(v))),
        )
      return {
        rowtype: names.map((name, i) => {
          const type = types[i] ?? 'VARCHAR'
          const decimal = /^DECIMAL\((\d+),(\d+)\)$/.exec(type)
          if (decimal)
            return {
              name,
              type: 'fixed',
              precision: Number(decimal[1]),
              scale: Number(decimal[2]),
              nullable: true,
            }
          if (/^(BIGINT|INTEGER|HUGEINT|SMALLINT|TINYINT|UBIGINT)$/.test(type))
            return { name, type: 'fixed', precision: 38, scale: 0, nullable: true }
          if (type === 'DOUBLE' || type === 'FLOAT') return { name, type: 'real', nullable: true }
          return { name, type: 'text', nullable: true }
        }),
        rowset: rows,
      }
    } catch (error) {
      throw duckError(error)
    }
  }

  /** BEGIN [NAME n]: the session's transaction, with an id and a name SHOW TRANSACTIONS lists. */
  async function begin(session: Session, name: string | undefined): Promise<Result> {
    // Snowflake ignores a BEGIN inside an open transaction.
    if (session.inTransaction) return text(['status'], [['Statement executed successfully.']])
    await session.conn.run('BEGIN').catch((error: unknown) => {
      throw duckError(error)
    })
    lastTransactionId += 1n
    session.inTransaction = true
    session.transaction = {
      id: lastTransactionId.toString(),
      name: name ?? randomUUID(),
      startedOn: new Date().toISOString(),
    }
    return text(['status'], [['Statement executed successfully.']])
  }

  /** The running transactions of the user (the fake has one), Snowflake's columns. */
  function showTransactions(): Result {
    const rows: (string | null)[][] = []
    for (const other of sessions.values())
      if (other.transaction)
        rows.push([
          other.transaction.id,
          username.toUpperCase(),
          other.id,
          other.transaction.name,
          other.transaction.startedOn,
          'running',
          '0',
        ])
    return text(['id', 'user', 'session', 'name', 'started_on', 'state', 'scope'], rows)
  }

  /** SYSTEM$ABORT_TRANSACTION: a running transaction is rolled back; any other id changes nothing. */
  async function abortTransaction(id: string): Promise<Result> {
    const owner = [...sessions.values()].find((other) => other.transaction?.id === id)
    if (owner) await rollbackTransaction(owner)
    return text(
      [`SYSTEM$ABORT_TRANSACTION(${id})`],
      [[owner ? `Aborted transaction id: ${id}` : 'Nothing to abort']],
    )
  }

  /** SYSTEM$ABORT_SESSION: the session ends (its token answers 390111 from now on), rolled back. */
  async function abortSession(id: string): Promise<Result> {
    const found = [...sessions.entries()].find(([, other]) => other.id === id)
    if (found) {
      const [token, other] = found
      sessions.delete(token)
      await rollbackTransaction(other)
      if (!other.busy) other.conn.closeSync()
    }
    return text(
      [`SYSTEM$ABORT_SESSION(${id})`],
      [[found ? 'Session successfully aborted.' : 'Session not found.']],
    )
  }

  /** Rolls back the session's open transaction, if it has one. */
  async function rollbackTransaction(session: Session): Promise<void> {
    if (!session.inTransaction) return
    await session.conn.run('ROLLBACK').catch(() => {})
    forgetTransaction(session)
  }

  function forgetTransaction(session: Session): void {
    Object.assign(session, { inTransaction: false, transaction: undefined, wrote: false, pendingLoads: [] })
  }

  async function put(session: Session, file: string, target: StagePath): Promise<Result> {
    const dir = join(stageDir(session, target.stage), target.path)
    mkdirSync(dir, { recursive: true })
    return {
      rowtype: [],
      rowset: [],
      extra: {
        command: 'UPLOAD',
        src_locations: [file],
        stageInfo: { locationType: 'LOCAL_FS', location: dir, path: target.path, region: null, creds: {} },
        autoCompress: false,
        sourceCompression: 'gzip',
        parallel: 1,
        overwrite: true,
        encryptionMaterial: null,
        statementTypeId: 0x6000,
      },
    }
  }

  async function copy(session: Session, command: Extract<Command, { kind: 'copy' }>): Promise<Result> {
    const target = tableName(session, command.table)
    const tableColumns = await columnsOf(session, command.table)
    const dir = stageDir(session, command.source.stage)
    const path = join(dir, command.source.path)
    if (!existsSync(path))
      throw new SqlError(
        '002003',
        '02000',
        `SQL compilation error: Stage file '${command.source.path}' does not exist.`,
      )
    const fileName = command.source.path
    const key = `${fileName}:${createHash('md5').update(readFileSync(path)).digest('hex')}`
    const request = {
      file: path,
      fileName,
      table: command.table,
      target,
      tableColumns,
      columns: command.columns,
      format: command.format,
    }
    if (command.validate) {
      const { errors } = await copyFile(session.conn, request, true)
      return text(
        ['ERROR', 'FILE', 'CODE', 'SQL_STATE', 'COLUMN_NAME', 'ROW_NUMBER'],
        errors.map((e) => [
          e.message,
          fileName,
          '100038',
          '22018',
          columnRef(command.table, e),
          String(e.row),
        ]),
      )
    }
    const pending = session.pendingLoads.some(([t, k]) => t === target && k === key)
    if (loadedInto(target).has(key) || pending)
      return text(['status'], [['Copy executed with 0 files processed.']])
    const { rows, errors } = await copyFile(session.conn, request, false).catch((error: unknown) => {
      throw duckError(error)
    })
    const first = errors[0]
    if (first)
      throw new SqlError(
        '100038',
        '22018',
        `${first.message}\n  File '${fileName}', line ${first.row}\n  Row ${first.row}, column ${columnRef(command.table, first)}\n  If you would like to continue loading when an error is encountered, use other values such as 'SKIP_FILE' or 'CONTINUE' for the ON_ERROR option.`,
      )
    if (session.inTransaction) session.pendingLoads.push([target, key])
    else loadedInto(target).add(key)
    if (captureDir)
      copyFileSync(path, join(captureDir, `${String(captured++).padStart(6, '0')}-${basename(path)}`))
    // PURGE removes a loaded file at once, whatever becomes of the transaction, as Snowflake's does.
    if (command.purge) rmSync(path, { force: true })
    return text(
      ['file', 'status', 'rows_parsed', 'rows_loaded', 'error_limit', 'errors_seen', 'first_error'],
      [[fileName, 'LOADED', String(rows), String(rows), '1', '0', null]],
    )
  }

  function columnRef(table: string, error: CopyError): string {
    const name = unquote(table.split('.').at(-1) ?? table)
    return `${quoteIdent(name)}[${quoteIdent(error.column)}:${error.row}]`
  }

  function loadedInto(table: string): Set<string> {
    const known = loaded.get(table)
    if (known) return known
    const set = new Set<string>()
    loaded.set(table, set)
    return set
  }

  /** `name`, `schema.name` or `db.schema.name` as the DuckDB name of the table. */
  function tableName(session: Session, name: string): string {
    const parts = name.match(/"(?:[^"]|"")*"|[^.]+/g)?.map(unquote) ?? []
    const [table, schema, db] = [...parts].reverse()
    return [db ?? session.database, schema ?? session.schema, table ?? ''].map(quoteIdent).join('.')
  }

  async function columnsOf(session: Session, name: string): Promise<TableColumn[]> {
    const [db, schema, table] = tableName(session, name)
      .match(/"(?:[^"]|"")*"/g)
      ?.map((p) => p.slice(1, -1).replaceAll('""', '"')) ?? ['', '', '']
    const r = await session.conn.runAndReadAll(
      'SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = ' +
        `${quoteText(db ?? '')} AND schema_name = ${quoteText(schema ?? '')} AND table_name = ${quoteText(table ?? '')} ORDER BY column_index`,
    )
    const columns = r.getRows().map(([n, t]) => ({ name: String(n), duckType: String(t) }))
    if (columns.length === 0)
      throw new SqlError(
        '002003',
        '42S02',
        `SQL compilation error: Table '${db}.${schema}.${table}' does not exist or not authorized.`,
      )
    return columns
  }

  /** The directory of a stage (the user's, a table's, a named one), by its name resolved in the session. */
  function stageDir(session: Session, stage: string): string {
    const key = `${session.database}\u0000${session.schema}\u0000${stage.replace(/^@/, '')}`
    return join(stageRoot, createHash('sha256').update(key).digest('hex').slice(0, 16))
  }

  const served = await serveOnLoopback(server)
  return {
    accessUrl: served.endpoint,
    account,
    username,
    password,
    database,
    warehouse: warehouses[0] ?? 'SKIPPR_WH',
    requests,
    requestCounts: () => countKinds(requests.map(requestKind)),
    async rows(schema, table) {
      const target = [database, schema, table].map(quoteIdent).join('.')
      const exists = await admin.runAndReadAll(
        `SELECT 1 FROM duckdb_tables() WHERE database_name = ${quoteText(database)} AND schema_name = ${quoteText(schema)} AND table_name = ${quoteText(table)}`,
      )
      if (exists.getRows().length === 0) return []
      const columns = await admin.runAndReadAll(
        `SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = ${quoteText(database)} AND schema_name = ${quoteText(schema)} AND table_name = ${quoteText(table)} ORDER BY column_index`,
      )
      // Whole numbers as bigint (DuckDB hands a DECIMAL to JS as a double).
      const select = columns
        .getRows()
        .map(([n, t]) =>
          /^DECIMAL\(\d+,0\)$/.test(String(t))
            ? `CAST(${quoteIdent(String(n))} AS HUGEINT) AS ${quoteIdent(String(n))}`
            : quoteIdent(String(n)),
        )
      const r = await admin.runAndReadAll(`SELECT ${select.join(', ')} FROM ${target}`)
      return r.getRowObjectsJS() as Record<string, unknown>[]
    },
    stagedFiles() {
      if (!existsSync(stageRoot)) return []
      return (readdirSync(stageRoot, { recursive: true }) as string[]).filter((p) => /\.gz$/.test(p))
    },
    dropResponseAfterCommit(match) {
      dropAfterCommit.push(match)
    },
    holdResponse(match) {
      holdAnswer.push(match)
    },
    expireSessions() {
      for (const token of sessions.keys()) expired.add(token)
    },
    forgetLoadHistory() {
      loaded.clear()
    },
    captureLoads(dir) {
      captureDir = dir
    },
    async sql(statement) {
      await admin.run(statement)
    },
    async stop() {
      await served.stop()
      for (const session of sessions.values()) session.conn.closeSync()
      sessions.clear()
      admin.closeSync()
      instance.closeSync()
      await rm(stageRoot, { recursive: true, force: true })
    },
  }
}

const PATH_KINDS: Record<string, string> = {
  '/session/v1/login-request': 'login',
  '/session/token-request': 'token renewal',
  '/session': 'logout',
  '/telemetry/send': 'telemetry',
}

/** The kind of a `requests` entry: a query by its statement's first word, else by its path. */
function requestKind(entry: string): string {
  const [, path = '', verb] = /^(\S+)\s*(\w*)/.exec(entry) ?? []
  if (path === '/queries/v1/query-request') return `query ${verb?.toUpperCase()}`
  return PATH_KINDS[path] ?? path
}

/** A DuckDB failure as Snowflake's error of the same kind. */
function duckError(error: unknown): SqlError {
  if (error instanceof SqlError) return error
  const message = String((error as Error)?.message ?? error).split('\n')[0] ?? ''
  if (/^Catalog Error/.test(message))
    return new SqlError(
      '002003',
      '42S02',
      `SQL compilation error: ${message.replace(/^Catalog Error: /, '')}`,
    )
  if (/^Conversion Error/.test(message))
    return new SqlError('100038', '22018', message.replace(/^Conversion Error: /, ''))
  if (/^(Parser|Binder) Error/.test(message))
    return new SqlError('001003', '42000', `SQL compilation error: ${message}`)
  if (/^TransactionContext Error/.test(message)) return new SqlError('000625', '57014', message)
  return new SqlError('100000', 'XX000', message)
}

/** Whether `token` is an RS256 JWT signed by the key pair of `publicKey`. */
function validJwt(token: string, publicKey: string): boolean {
  const [header, payload, signature] = token.split('.')
  if (!header || !payload || !signature) return false
  return verify(
    'RSA-SHA256',
    Buffer.from(`${header}.${payload}`),
    publicKey,
    Buffer.from(signature, 'base64url'),
  )
}
