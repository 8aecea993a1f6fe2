import { setTimeout as sleep } from 'node:timers/promises'
import type {
  Logger,
  NamespaceSchema,
  ReadOptions,
  Source,
  SourceChunk,
  SourceOffset,
} from '@skippr/connector-api'
import { describeTarget } from '@skippr/connector-api'
import type pg from 'pg'
import { to as copyTo } from 'pg-copy-streams'
import type { Column, TableInfo } from './catalog.js'
import { namespaceSchema, outputExpression, readTable } from './catalog.js'
import type { PostgresSourceConfig, TableSpec } from './config.js'
import { tableSpecs } from './config.js'
import { connect } from './connection.js'
import { QueryFailedError, SourceUnavailableError } from './errors.js'
import { boundSql, copySql, lastKeySql, tableKey } from './keyset.js'
import type { Positions } from './offset.js'
import { keyAfter, parsePositions, positionEntry, positionsOffset } from './offset.js'

interface Chunk {
  readonly body: Buffer
  readonly rows: number
  /** The key of the chunk's last row. */
  readonly upto: string[]
  /** No rows after this chunk (as of its snapshot). */
  readonly last: boolean
}

export class PostgresSource implements Source {
  private client: pg.Client | undefined
  private readonly tables: readonly TableSpec[]

  constructor(
    private readonly config: PostgresSourceConfig,
    private readonly logger: Logger,
  ) {
    this.tables = tableSpecs(config)
  }

  async discover(): Promise<NamespaceSchema[]> {
    const schemas: NamespaceSchema[] = []
    for (const spec of this.tables)
      schemas.push(namespaceSchema(await this.guard(spec, (c) => readTable(c, spec))))
    return schemas
  }

  async *read(from: SourceOffset | undefined, options: ReadOptions): AsyncIterable<SourceChunk> {
    const positions = parsePositions(from)
    for (;;) {
      for (const spec of this.tables) {
        if (options.signal.aborted) return
        yield* this.readTable(spec, positions, options.signal)
      }
      if (!options.follow || options.signal.aborted) return
      await sleep(this.config.poll_interval_seconds * 1000, undefined, { signal: options.signal }).catch(
        () => {},
      )
    }
  }

  /** Connects and finds every configured table, as a read would first. */
  async check(): Promise<void> {
    for (const spec of this.tables) await this.guard(spec, (c) => readTable(c, spec))
  }

  /** `count(*)` of the namespace's table now; 0 for a namespace that is no configured table. */
  async count(namespace: string): Promise<number> {
    const spec = this.tables.find((table) => table.name === namespace)
    if (spec === undefined) return 0
    const table = await this.guard(spec, (c) => readTable(c, spec))
    const { rows } = await this.guard(spec, (c) =>
      c.query<{ n: string }>(`SELECT count(*) AS n FROM ${table.qualified}`),
    )
    return Number(rows[0]?.n ?? 0)
  }

  async close(): Promise<void> {
    const client = this.client
    this.client = undefined
    await client?.end()
  }

  /** Reads one table up to its current end, one chunk (and one short transaction) at a time. */
  private async *readTable(
    spec: TableSpec,
    positions: Positions,
    signal: AbortSignal,
  ): AsyncIterable<SourceChunk> {
    const table = await this.guard(spec, (c) => readTable(c, spec))
    const key = tableKey(table, this.config.mode)
    const keyColumns = key.map((c) => c.name)
    const schema = namespaceSchema(table)
    const select = table.columns.map(outputExpression)
    let after = keyAfter(positions.get(spec.name), spec.name, keyColumns)
    while (!signal.aborted) {
      const chunk = await this.guard(spec, (c) => this.readChunk(c, table, key, select, after))
      if (!chunk) return
      after = chunk.upto
      // A finished snapshot leaves no position, so the next run copies the table afresh.
      if (this.config.mode === 'snapshot' && chunk.last) positions.delete(spec.name)
      else positions.set(spec.name, positionEntry(keyColumns, chunk.upto))
      this.logger.debug('read chunk', { table: spec.name, rows: chunk.rows, bytes: chunk.body.length })
      yield {
        namespace: spec.name,
        format: 'csv',
        rows: chunk.rows,
        body: chunk.body,
        offset: positionsOffset(positions),
        schema,
      }
      if (chunk.last) return
    }
  }

  /**
   * One chunk in one REPEATABLE READ transaction, so the bound query and the COPY see the same rows.
   * The rows stream out of COPY as CSV bytes and are never parsed here.
   */
  private async readChunk(
    client: pg.Client,
    table: TableInfo,
    key: readonly Column[],
    select: readonly string[],
    after: readonly string[] | undefined,
  ): Promise<Chunk | undefined> {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    try {
      const bound = await client.query<string[]>({
        text: boundSql(table, key, after, this.config.batch_rows),
        rowMode: 'array',
      })
      let upto = bound.rows[0]
      let last = bound.rows.length < 2
      if (!upto) {
        const tail = await client.query<string[]>({ text: lastKeySql(table, key, after), rowMode: 'array' })
        upto = tail.rows[0]
        last = true
      }
      if (!upto) {
        await client.query('COMMIT')
        return undefined
      }
      const copy = client.query(copyTo(copySql(table, key, select, after, upto)))
      const parts: Buffer[] = []
      for await (const part of copy) parts.push(part as Buffer)
      // COPY's row count arrives with its completion message, which COMMIT waits behind.
      await client.query('COMMIT')
      return { body: Buffer.concat(parts), rows: copy.rowCount, upto, last }
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    }
  }

  /** Runs `work` on the connection, opening it when needed and dropping it when it broke. */
  private async guard<T>(spec: TableSpec, work: (client: pg.Client) => Promise<T>): Promise<T> {
    this.client ??= await connect(this.config.connection_string)
    try {
      return await work(this.client)
    } catch (error) {
      if (isSkipprError(error)) throw error
      const client = this.client
      this.client = undefined
      await client?.end().catch(() => {})
      if (isServerRefusal(error)) throw new QueryFailedError(`${spec.schema}.${spec.name}`, error)
      throw new SourceUnavailableError(describeTarget(this.config.connection_string), { cause: error })
    }
  }
}

function isSkipprError(error: unknown): boolean {
  return (
    typeof (error as { code?: unknown })?.code === 'string' &&
    (error as { code: string }).code.startsWith('SKIPPR_')
  )
}

/**
 * An error the server sent (pg's DatabaseError has a `severity`; socket errors such as EPIPE have a
 * code but none), other than connection loss (08) or shutdown (57P): the query itself was refused.
 */
function isServerRefusal(error: unknown): boolean {
  const e = error as { code?: unknown; severity?: unknown } | undefined
  const code = typeof e?.severity === 'string' && typeof e.code === 'string' ? e.code : ''
  return /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08') && !code.startsWith('57P')
}
