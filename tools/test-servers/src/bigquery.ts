/**
 * A protocol-level fake of BigQuery's REST API v2 for tests of the Bigquery sink through the official
 * SDK: datasets, tables, multipart-upload load jobs, query jobs and their results, with the rows kept
 * in an embedded DuckDB (a dataset is a DuckDB schema). It reproduces what an exactly-once sink relies
 * on: a reused job id answers 409 `duplicate` and the job stays readable, and a fault hook drops the
 * connection after a job committed (a write that landed but looked failed). See the README.
 */
import { randomUUID } from 'node:crypto'
import { writeFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { join } from 'node:path'
import type { DuckDBInstance } from '@duckdb/node-api'
import { type LoadColumn, loadBody } from './bigquery-load.js'
import { type QueryParameter, SqlError, splitStatements, toDuckdb } from './bigquery-sql.js'
import { serveOnLoopback } from './in-process-server.js'
import { countKinds } from './request-counts.js'

export interface FakeBigqueryOptions {
  /** The project id the SDK is given (default `skippr-test`). */
  readonly project?: string
  /** The bearer token every request must carry (default `fake-token`). */
  readonly token?: string
  /** How many jobs.get calls answer RUNNING before a job reads DONE (default 0). */
  readonly pollsBeforeDone?: number
  /** A DuckDB file for the rows, e.g. for a harness to read after stop() (default in memory). */
  readonly path?: string
}

/** What a test can ask of the server besides the REST API. */
export interface FakeBigquery {
  /** `http://127.0.0.1:<port>`: the SDK's `apiEndpoint`. */
  readonly endpoint: string
  readonly project: string
  readonly token: string
  /** Every request's method and path (no query string), in order: for round-trip counts. */
  readonly requests: string[]
  /** How many requests of each kind so far (`upload`, `jobs.get`, `jobs.query`, `tables.delete`, …). */
  requestCounts(): Record<string, number>
  /** Every row of `dataset.table` as DuckDB gives it (bigint, Date, JSON text); [] if missing. */
  rows(dataset: string, table: string): Promise<Record<string, unknown>[]>
  /** Whether the table exists. */
  hasTable(dataset: string, table: string): Promise<boolean>
  /**
   * The next request whose `METHOD /path body` text matches `match` runs and commits, and then its
   * connection is dropped unanswered.
   */
  dropResponseAfterCommit(match: RegExp): void
  /** Forgets every job, as BigQuery does once a job id is older than its retention. */
  forgetJobs(): void
  /**
   * From now on, a copy of every load job's media goes to `dir`, named `<6-digit order>.<csv|jsonl>`,
   * for a bench to load the very same bytes again; undefined stops it.
   */
  captureLoads(dir: string | undefined): void
  /** Runs DuckDB SQL directly, for a test's own setup (a table of a type the sink refuses). */
  sql(statement: string): Promise<void>
  stop(): Promise<void>
}

interface Job {
  readonly resource: Record<string, unknown>
  result?: QueryResult
  pollsLeft: number
}

interface QueryResult {
  readonly fields: { name: string; type: string }[]
  readonly rows: (string | null)[][]
}

class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message)
  }
}

const BQ_TYPES: Record<string, string> = {
  STRING: 'VARCHAR',
  INT64: 'BIGINT',
  INTEGER: 'BIGINT',
  FLOAT64: 'DOUBLE',
  FLOAT: 'DOUBLE',
  BOOL: 'BOOLEAN',
  BOOLEAN: 'BOOLEAN',
  DATE: 'DATE',
  TIMESTAMP: 'TIMESTAMPTZ',
  JSON: 'JSON',
  NUMERIC: 'DECIMAL(38,9)',
  BYTES: 'BLOB',
  GEOGRAPHY: 'VARCHAR',
}

/** DuckDB column types back to BigQuery's (GEOGRAPHY is kept as VARCHAR with a comment-free guess). */
const DUCK_TYPES: Record<string, string> = {
  VARCHAR: 'STRING',
  BIGINT: 'INTEGER',
  INTEGER: 'INTEGER',
  DOUBLE: 'FLOAT',
  BOOLEAN: 'BOOLEAN',
  DATE: 'DATE',
  'TIMESTAMP WITH TIME ZONE': 'TIMESTAMP',
  JSON: 'JSON',
  'DECIMAL(38,9)': 'NUMERIC',
  BLOB: 'BYTES',
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`
const quoteText = (text: string) => `'${text.replaceAll("'", "''")}'`

export async function startFakeBigquery(options: FakeBigqueryOptions = {}): Promise<FakeBigquery> {
  const project = options.project ?? 'skippr-test'
  const token = options.token ?? 'fake-token'
  const { DuckDBInstance } = await import('@duckdb/node-api')
  const instance: DuckDBInstance = await DuckDBInstance.create(options.path ?? ':memory:')
  const conn = await instance.connect()
  await conn.run("SET TimeZone = 'UTC'")
  await conn.run('CREATE MACRO to_json_string(x) AS CAST(x AS VARCHAR)')
  const jobs = new Map<string, Job>()
  const requests: string[] = []
  const dropAfterCommit: RegExp[] = []
  /** Where load jobs' media are copied to (captureLoads), and how many so far. */
  let captureDir: string | undefined
  let captured = 0
  // One statement at a time on the one connection, so scripts' transactions never interleave.
  let queue: Promise<unknown> = Promise.resolve()
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work)
    queue = next.catch(() => {})
    return next
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake')
      requests.push(`${req.method} ${url.pathname}`)
      const body = Buffer.concat(chunks)
      const seen = `${req.method} ${url.pathname} ${body.toString('utf8')}`
      const drop = dropAfterCommit.findIndex((m) => m.test(seen))
      if (drop >= 0) dropAfterCommit.splice(drop, 1)
      handle(req, url, body).then(
        (body) => {
          if (drop >= 0) return req.socket.destroy()
          send(res, 200, body)
        },
        (error: unknown) => {
          const failure =
            error instanceof ApiFailure ? error : new ApiFailure(500, 'internalError', String(error))
          send(res, failure.status, {
            error: {
              code: failure.status,
              message: failure.message,
              errors: [{ reason: failure.reason, message: failure.message, domain: 'global' }],
            },
          })
        },
      )
    })
  })

  async function handle(req: IncomingMessage, url: URL, body: Buffer): Promise<unknown> {
    if (req.headers.authorization !== `Bearer ${token}`)
      throw new ApiFailure(401, 'unauthorized', 'Request had invalid authentication credentials.')
    const path = url.pathname
    const method = req.method ?? 'GET'
    if (method === 'POST' && /^\/upload\/bigquery\/v2\/projects\/[^/]+\/jobs$/.test(path))
      return serial(() => insertLoadJob(req, body))
    const m = /^\/bigquery\/v2\/projects\/([^/]+)\/(.*)$/.exec(path)
    if (m === null) throw new ApiFailure(404, 'notFound', `Not found: URL ${path}`)
    if (decodeURIComponent(m[1] as string) !== project)
      throw new ApiFailure(404, 'notFound', `Not found: Project ${m[1]}`)
    const rest = (m[2] as string).split('/').map(decodeURIComponent)
    const json = body.length > 0 ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {}
    return serial(() => route(method, rest, json))
  }

  async function route(method: string, rest: string[], json: Record<string, unknown>): Promise<unknown> {
    const [kind, id, sub, tableId] = rest
    if (kind === 'datasets' && id === undefined && method === 'POST') return insertDataset(json)
    if (kind === 'datasets' && id !== undefined && sub === undefined && method === 'GET')
      return getDataset(id)
    if (kind === 'datasets' && id !== undefined && sub === 'tables') {
      if (tableId === undefined && method === 'POST') return insertTable(id, json)
      if (tableId !== undefined && method === 'GET') return tableResource(id, tableId)
      if (tableId !== undefined && (method === 'PATCH' || method === 'PUT'))
        return patchTable(id, tableId, json)
      if (tableId !== undefined && method === 'DELETE') return deleteTable(id, tableId)
    }
    if (kind === 'jobs' && id === undefined && method === 'POST') return insertQueryJob(json)
    if (kind === 'jobs' && id !== undefined && method === 'GET') return getJob(id)
    if (kind === 'queries' && id === undefined && method === 'POST') return runQuery(json)
    if (kind === 'queries' && id !== undefined && method === 'GET') return queryResults(id)
    throw new ApiFailure(400, 'invalid', `the fake BigQuery does not serve ${method} ${rest.join('/')}`)
  }

  async function datasetExists(dataset: string): Promise<boolean> {
    const r = await conn.runAndReadAll(
      `SELECT 1 FROM duckdb_schemas() WHERE schema_name = ${quoteText(dataset)}`,
    )
    return r.getRows().length > 0
  }

  async function requireDataset(dataset: string): Promise<void> {
    if (!(await datasetExists(dataset)))
      throw new ApiFailure(404, 'notFound', `Not found: Dataset ${project}:${dataset}`)
  }

  function datasetResource(dataset: string) {
    return {
      kind: 'bigquery#dataset',
      id: `${project}:${dataset}`,
      datasetReference: { projectId: project, datasetId: dataset },
      location: 'US',
    }
  }

  async function insertDataset(json: Record<string, unknown>) {
    const dataset = (json.datasetReference as { datasetId?: string } | undefined)?.datasetId
    if (!dataset) throw new ApiFailure(400, 'invalid', 'Dataset reference is missing')
    if (await datasetExists(dataset))
      throw new ApiFailure(409, 'duplicate', `Already Exists: Dataset ${project}:${dataset}`)
    await conn.run(`CREATE SCHEMA ${quoteIdent(dataset)}`)
    return datasetResource(dataset)
  }

  async function getDataset(dataset: string) {
    await requireDataset(dataset)
    return datasetResource(dataset)
  }

  async function columnsOf(dataset: string, table: string): Promise<{ name: string; duckType: string }[]> {
    const r = await conn.runAndReadAll(
      'SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ' +
        `${quoteText(dataset)} AND table_name = ${quoteText(table)} ORDER BY column_index`,
    )
    return r.getRows().map(([name, type]) => ({ name: String(name), duckType: String(type) }))
  }

  async function tableExists(dataset: string, table: string): Promise<boolean> {
    const r = await conn.runAndReadAll(
      `SELECT 1 FROM duckdb_tables() WHERE schema_name = ${quoteText(dataset)} AND table_name = ${quoteText(table)}`,
    )
    return r.getRows().length > 0
  }

  async function tableResource(dataset: string, table: string) {
    if (!(await tableExists(dataset, table)))
      throw new ApiFailure(404, 'notFound', `Not found: Table ${project}:${dataset}.${table}`)
    const fields = (await columnsOf(dataset, table)).map((c) => ({
      name: c.name,
      type: DUCK_TYPES[c.duckType] ?? 'STRING',
      mode: 'NULLABLE',
    }))
    return {
      kind: 'bigquery#table',
      id: `${project}:${dataset}.${table}`,
      tableReference: { projectId: project, datasetId: dataset, tableId: table },
      schema: { fields },
      location: 'US',
    }
  }

  function duckTypeOf(field: { name: string; type?: string }): string {
    const type = BQ_TYPES[(field.type ?? 'STRING').toUpperCase()]
    if (!type)
      throw new ApiFailure(400, 'invalid', `Invalid field type ${field.type} for field ${field.name}`)
    return type
  }

  async function createTable(dataset: string, table: string, fields: { name: string; type?: string }[]) {
    const columns = fields.map((f) => `${quoteIdent(f.name)} ${duckTypeOf(f)}`).join(', ')
    await conn.run(`CREATE TABLE ${quoteIdent(dataset)}.${quoteIdent(table)} (${columns})`)
  }

  async function insertTable(dataset: string, json: Record<string, unknown>) {
    await requireDataset(dataset)
    const table = (json.tableReference as { tableId?: string } | undefined)?.tableId
    if (!table) throw new ApiFailure(400, 'invalid', 'Table reference is missing')
    if (await tableExists(dataset, table))
      throw new ApiFailure(409, 'duplicate', `Already Exists: Table ${project}:${dataset}.${table}`)
    const fields = ((json.schema as { fields?: unknown } | undefined)?.fields ?? []) as {
      name: string
      type?: string
    }[]
    await createTable(dataset, table, fields)
    return tableResource(dataset, table)
  }

  /** A schema update: fields may be added (BigQuery refuses a changed type or a dropped field). */
  async function patchTable(dataset: string, table: string, json: Record<string, unknown>) {
    const current = await tableResource(dataset, table)
    const fields = (json.schema as { fields?: { name: string; type?: string }[] } | undefined)?.fields
    if (fields) {
      const have = new Map(current.schema.fields.map((f) => [f.name.toLowerCase(), f]))
      for (const old of current.schema.fields)
        if (!fields.some((f) => f.name.toLowerCase() === old.name.toLowerCase()))
          throw new ApiFailure(
            400,
            'invalid',
            `Provided Schema does not match Table ${project}:${dataset}.${table}. Cannot add fields (field: ${old.name})`,
          )
      for (const field of fields) {
        const existing = have.get(field.name.toLowerCase())
        if (existing && duckTypeOf(existing) !== duckTypeOf(field))
          throw new ApiFailure(
            400,
            'invalid',
            `Provided Schema does not match Table ${project}:${dataset}.${table}. Field ${field.name} has changed type from ${existing.type} to ${field.type}`,
          )
        if (!existing)
          await conn.run(
            `ALTER TABLE ${quoteIdent(dataset)}.${quoteIdent(table)} ADD COLUMN ${quoteIdent(field.name)} ${duckTypeOf(field)}`,
          )
      }
    }
    return tableResource(dataset, table)
  }

  async function deleteTable(dataset: string, table: string) {
    await tableResource(dataset, table)
    await conn.run(`DROP TABLE ${quoteIdent(dataset)}.${quoteIdent(table)}`)
    return {}
  }

  function claimJobId(reference: { jobId?: string } | undefined): string {
    const jobId = reference?.jobId ?? randomUUID()
    if (!/^[A-Za-z0-9_-]{1,1024}$/.test(jobId))
      throw new ApiFailure(
        400,
        'invalid',
        `Invalid job ID "${jobId}". Job IDs must be alphanumeric (plus underscores and dashes) and must be at most 1024 characters long.`,
      )
    if (jobs.has(jobId)) throw new ApiFailure(409, 'duplicate', `Already Exists: Job ${project}:US.${jobId}`)
    return jobId
  }

  function newJob(
    jobId: string,
    configuration: unknown,
    status: Record<string, unknown>,
    statistics: Record<string, unknown>,
  ): Job {
    const job: Job = {
      resource: {
        kind: 'bigquery#job',
        id: `${project}:US.${jobId}`,
        jobReference: { projectId: project, jobId, location: 'US' },
        configuration,
        status,
        statistics: { creationTime: String(Date.now()), ...statistics },
      },
      pollsLeft: options.pollsBeforeDone ?? 0,
    }
    jobs.set(jobId, job)
    return job
  }

  function jobView(job: Job): Record<string, unknown> {
    if (job.pollsLeft > 0) return { ...job.resource, status: { state: 'RUNNING' } }
    return job.resource
  }

  async function insertLoadJob(req: IncomingMessage, body: Buffer) {
    const { metadata, media } = parseMultipart(req, body)
    const reference = metadata.jobReference as { jobId?: string } | undefined
    const jobId = claimJobId(reference)
    const load = (metadata.configuration as { load?: Record<string, unknown> } | undefined)?.load ?? {}
    const outcome = await runLoad(load, media).catch((error: unknown) => {
      if (error instanceof ApiFailure) return { errors: [{ reason: error.reason, message: error.message }] }
      throw error
    })
    const status =
      'outputRows' in outcome
        ? { state: 'DONE' }
        : { state: 'DONE', errorResult: outcome.errors[0], errors: outcome.errors }
    const statistics =
      'outputRows' in outcome
        ? {
            load: {
              outputRows: String(outcome.outputRows),
              inputFiles: '1',
              inputFileBytes: String(media.length),
            },
          }
        : {}
    return jobView(newJob(jobId, metadata.configuration, status, statistics))
  }

  async function runLoad(
    load: Record<string, unknown>,
    media: Buffer,
  ): Promise<{ outputRows: number } | { errors: { reason: string; message: string; location?: string }[] }> {
    const destination = load.destinationTable as { datasetId: string; tableId: string }
    const dataset = destination.datasetId
    const table = destination.tableId
    await requireDataset(dataset)
    const fields = (load.schema as { fields?: { name: string; type?: string }[] } | undefined)?.fields ?? []
    if (!(await tableExists(dataset, table))) {
      if (load.createDisposition === 'CREATE_NEVER')
        throw new ApiFailure(404, 'notFound', `Not found: Table ${project}:${dataset}.${table}`)
      await createTable(dataset, table, fields)
    } else if (fields.length > 0) {
      const allowAdd = ((load.schemaUpdateOptions as string[] | undefined) ?? []).includes(
        'ALLOW_FIELD_ADDITION',
      )
      const existing = new Set((await columnsOf(dataset, table)).map((c) => c.name.toLowerCase()))
      const added = fields.filter((f) => !existing.has(f.name.toLowerCase()))
      if (added.length > 0 && !allowAdd && load.writeDisposition !== 'WRITE_TRUNCATE')
        throw new ApiFailure(
          400,
          'invalid',
          `Provided Schema does not match Table ${project}:${dataset}.${table}. Cannot add fields (field: ${added[0]?.name})`,
        )
      for (const f of added)
        await conn.run(
          `ALTER TABLE ${quoteIdent(dataset)}.${quoteIdent(table)} ADD COLUMN ${quoteIdent(f.name)} ${duckTypeOf(f)}`,
        )
    }
    const tableColumns = new Map((await columnsOf(dataset, table)).map((c) => [c.name.toLowerCase(), c]))
    const names =
      fields.length > 0 ? fields.map((f) => f.name) : [...tableColumns.values()].map((c) => c.name)
    const columns: LoadColumn[] = names.map((name) => {
      const column = tableColumns.get(name.toLowerCase())
      if (!column) throw new ApiFailure(400, 'invalid', `No such field: ${name}`)
      return { name: column.name, duckType: column.duckType, bqType: DUCK_TYPES[column.duckType] ?? 'STRING' }
    })
    const format = load.sourceFormat === 'NEWLINE_DELIMITED_JSON' ? 'NEWLINE_DELIMITED_JSON' : 'CSV'
    if (captureDir) {
      const name = `${String(captured++).padStart(6, '0')}.${format === 'CSV' ? 'csv' : 'jsonl'}`
      await writeFile(join(captureDir, name), media)
    }
    const result = await loadBody(
      conn,
      `${quoteIdent(dataset)}.${quoteIdent(table)}`,
      columns,
      format,
      media,
      load.writeDisposition === 'WRITE_TRUNCATE',
    )
    if (result.ok) return { outputRows: result.outputRows }
    const summary = {
      reason: 'invalid',
      message: `Error while reading data, error message: ${format === 'CSV' ? 'CSV' : 'JSON'} table encountered too many errors, giving up. Rows: ${result.errors.length}; errors: ${result.errors.length}. Please look into the errors[] collection for more details.`,
    }
    return { errors: [summary, ...result.errors.map((e) => ({ reason: 'invalid', ...e }))] }
  }

  async function insertQueryJob(json: Record<string, unknown>) {
    const reference = json.jobReference as { jobId?: string } | undefined
    const jobId = claimJobId(reference)
    const query = (json.configuration as { query?: QueryRequest } | undefined)?.query
    if (!query) throw new ApiFailure(400, 'invalid', 'the fake BigQuery runs query and load jobs only')
    const outcome = await runScript(query.query, query.queryParameters ?? []).catch((error: unknown) => {
      if (error instanceof ApiFailure) return error
      throw error
    })
    if (outcome instanceof ApiFailure) {
      const error = { reason: outcome.reason, message: outcome.message }
      return jobView(
        newJob(jobId, json.configuration, { state: 'DONE', errorResult: error, errors: [error] }, {}),
      )
    }
    const job = newJob(jobId, json.configuration, { state: 'DONE' }, { query: { statementType: 'SCRIPT' } })
    job.result = outcome
    return jobView(job)
  }

  function getJob(jobId: string) {
    const job = jobs.get(jobId)
    if (!job) throw new ApiFailure(404, 'notFound', `Not found: Job ${project}:US.${jobId}`)
    const view = jobView(job)
    if (job.pollsLeft > 0) job.pollsLeft--
    return view
  }

  function resultsBody(jobId: string, result: QueryResult) {
    return {
      kind: 'bigquery#getQueryResultsResponse',
      jobReference: { projectId: project, jobId, location: 'US' },
      jobComplete: true,
      schema: { fields: result.fields.map((f) => ({ ...f, mode: 'NULLABLE' })) },
      rows: result.rows.map((row) => ({ f: row.map((v) => ({ v })) })),
      totalRows: String(result.rows.length),
    }
  }

  function queryResults(jobId: string) {
    const job = jobs.get(jobId)
    if (!job) throw new ApiFailure(404, 'notFound', `Not found: Job ${project}:US.${jobId}`)
    const status = job.resource.status as { errorResult?: { reason: string; message: string } }
    if (status.errorResult) throw new ApiFailure(400, status.errorResult.reason, status.errorResult.message)
    return resultsBody(jobId, job.result ?? { fields: [], rows: [] })
  }

  async function runQuery(json: Record<string, unknown>) {
    const request = json as unknown as QueryRequest
    const jobId = randomUUID()
    const result = await runScript(request.query, request.queryParameters ?? [])
    const job = newJob(jobId, { query: request }, { state: 'DONE' }, {})
    job.result = result
    return resultsBody(jobId, result)
  }

  /** Runs each statement; the result is the last statement's, as a script job's is. */
  async function runScript(query: string, params: readonly QueryParameter[]): Promise<QueryResult> {
    let result: QueryResult = { fields: [], rows: [] }
    let open = false
    try {
      for (const statement of splitStatements(query)) {
        const sql = toDuckdb(statement, project, params)
        if (/^BEGIN/i.test(sql)) open = true
        if (/^COMMIT/i.test(sql)) open = false
        const read = await conn.runAndReadAll(sql)
        const types = read.columnTypes().map(String)
        result = {
          fields: read.columnNames().map((name, i) => ({ name, type: resultType(types[i] ?? '') })),
          rows: read.getRowsJS().map((row) => row.map(resultValue)),
        }
      }
      return result
    } catch (error) {
      if (open) await conn.run('ROLLBACK').catch(() => {})
      if (error instanceof ApiFailure) throw error
      const message = error instanceof Error ? error.message.split('\n')[0] : String(error)
      const notFound = /does not exist|not found/i.test(message ?? '')
      throw new ApiFailure(
        notFound ? 404 : 400,
        notFound ? 'notFound' : 'invalidQuery',
        error instanceof SqlError ? (message ?? '') : `Query error: ${message}`,
      )
    }
  }

  const served = await serveOnLoopback(server)
  return {
    endpoint: served.endpoint,
    project,
    token,
    requests,
    requestCounts: () => countKinds(requests.map(requestKind)),
    async rows(dataset, table) {
      return serial(async () => {
        if (!(await tableExists(dataset, table))) return []
        const r = await conn.runAndReadAll(`SELECT * FROM ${quoteIdent(dataset)}.${quoteIdent(table)}`)
        return r.getRowObjectsJS() as Record<string, unknown>[]
      })
    },
    hasTable: (dataset, table) => serial(() => tableExists(dataset, table)),
    dropResponseAfterCommit(match) {
      dropAfterCommit.push(match)
    },
    forgetJobs() {
      jobs.clear()
    },
    captureLoads(dir) {
      captureDir = dir
    },
    sql: (statement) => serial(() => conn.run(statement).then(() => {})),
    async stop() {
      await served.stop()
      conn.closeSync()
      instance.closeSync()
    },
  }
}

/** The REST method a `requests` entry (`METHOD /path`) called: `upload`, `jobs.get`, `tables.delete`, … */
function requestKind(entry: string): string {
  const [method = '', path = ''] = entry.split(' ')
  if (path.startsWith('/upload/')) return 'upload'
  // After `/bigquery/v2/projects/<p>/`: a collection, or a collection and an id, nested for tables.
  const rest = path.split('/').slice(5)
  const collection = rest.length > 2 ? 'tables' : (rest[0] ?? '')
  if (collection === 'queries') return method === 'POST' ? 'jobs.query' : 'jobs.getQueryResults'
  const verb = rest.length % 2 === 0 ? method.toLowerCase() : method === 'POST' ? 'insert' : 'list'
  return `${collection}.${verb}`
}

interface QueryRequest {
  readonly query: string
  readonly queryParameters?: QueryParameter[]
}

function resultType(duckType: string): string {
  if (duckType === 'BIGINT' || duckType === 'INTEGER' || duckType === 'HUGEINT') return 'INTEGER'
  if (duckType === 'BOOLEAN') return 'BOOLEAN'
  return 'STRING'
}

function resultValue(value: unknown): string | null {
  if (value === null || value === undefined) return null
  if (value instanceof Date) return value.toISOString()
  return typeof value === 'object' ? JSON.stringify(value) : String(value)
}

/** The JSON metadata and the media of a `multipart/related` upload. */
function parseMultipart(
  req: IncomingMessage,
  body: Buffer,
): { metadata: Record<string, unknown>; media: Buffer } {
  const boundary = /boundary=("?)([^";]+)\1/.exec(req.headers['content-type'] ?? '')?.[2]
  if (!boundary) throw new ApiFailure(400, 'invalid', 'the upload is not multipart/related')
  const delimiter = Buffer.from(`--${boundary}`)
  const parts: Buffer[] = []
  let at = body.indexOf(delimiter)
  while (at >= 0) {
    const next = body.indexOf(delimiter, at + delimiter.length)
    if (next < 0) break
    parts.push(body.subarray(at + delimiter.length, next))
    at = next
  }
  const contentOf = (part: Buffer) => {
    const headerEnd = part.indexOf('\r\n\r\n') >= 0 ? part.indexOf('\r\n\r\n') + 4 : part.indexOf('\n\n') + 2
    // The part ends in the line break before the next delimiter.
    const end = part[part.length - 2] === 13 ? part.length - 2 : part.length - 1
    return part.subarray(headerEnd, end)
  }
  const [meta, media] = parts
  if (!meta || !media)
    throw new ApiFailure(400, 'invalid', 'the upload needs a metadata part and a media part')
  return {
    metadata: JSON.parse(contentOf(meta).toString('utf8')) as Record<string, unknown>,
    media: Buffer.from(contentOf(media)),
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': Buffer.byteLength(text),
  })
  res.end(text)
}
