import { randomUUID } from 'node:crypto'
import type {
  Field,
  Guarantee,
  Logger,
  NamespaceSchema,
  RefusedRow,
  Sink,
  SinkBatch,
  WriteOutcome,
} from '@skippr/connector-api'
import {
  alreadyLanded,
  BATCHES_TABLE,
  batchKey,
  cannotLand,
  FENCES_TABLE,
  FencedError,
  landed,
  permanent,
  RowCountMismatchError,
  refused,
  retryLater,
} from '@skippr/connector-api'
import { parse } from 'valibot'
import { Session } from './client.js'
import { type SnowflakeSinkConfig, type SnowflakeSinkOptions, snowflakeSinkConfig } from './config.js'
import { type CopyRequest, copyPart, refusedRows, refusesValues } from './copy.js'
import { abortDetached, transactionName } from './detached.js'
import { classify, codeOf, SNOWFLAKE_REFUSED, SnowflakeError } from './errors.js'
import { Ledger } from './ledger.js'
import { configName, dottedName, ident, stagedFileName } from './names.js'
import { Sessions } from './sessions.js'
import { putFile, removeFile } from './stage.js'
import { baseType, changeFor, columnType, rewriteExpression } from './types.js'

/** A table's columns: exact name → base type, as DESCRIBE TABLE showed them. */
type Columns = Map<string, string>

/**
 * Where a batch's transaction got to: commit it; or roll back and answer, unless the ledger says the
 * batch landed or is fenced; or roll back and find the refused values of the parts from `part` on
 * (those before it loaded, and PURGE removed their files).
 */
type Step =
  | { readonly kind: 'commit'; readonly rows: number }
  | { readonly kind: 'outcome'; readonly outcome: WriteOutcome }
  | { readonly kind: 'refused'; readonly cause: unknown; readonly part: number }

/**
 * Exactly-once into Snowflake. Each part is PUT (gzip) to a stage under a name from the batch
 * identity; then one transaction holds the pipeline's fence row, COPYs every part (PURGE = TRUE; its
 * loaded row count checked against the part's), records the identity unless it, or a higher fence,
 * is in the ledger, and commits only if it did. A retry finds the identity and commits nothing,
 * however long after. See the README.
 */
export class SnowflakeSink implements Sink {
  readonly guarantee: Guarantee = 'exactly-once'
  /**
   * Two batches at once, each in a session of its own: one's PUTs overlap the other's transaction.
   * Their transactions still run one after the other (the fence row's UPDATE waits for the other's
   * COMMIT), and each stands alone: identity and fence checked, rows and ledger row in it.
   */
  readonly concurrentWrites = 2
  private readonly config: SnowflakeSinkConfig
  private readonly ledger: Ledger
  private readonly sessions = new Sessions(() => this.login())
  private ledgerMade = false
  /** Pipelines whose fence row this instance has seen exist (a row is never deleted by the sink). */
  private readonly fenceRows = new Set<string>()
  /** Table name → its columns, as this instance last saw or made them. */
  private readonly tables = new Map<string, Columns>()

  /** `config` as in skippr.yml; keys left out take their defaults. */
  constructor(
    config: SnowflakeSinkOptions,
    private readonly logger: Logger,
  ) {
    this.config = parse(snowflakeSinkConfig, config)
    this.ledger = new Ledger(this.table(BATCHES_TABLE), this.table(FENCES_TABLE))
  }

  async prepare(schema: NamespaceSchema): Promise<void> {
    try {
      await this.withSession(async (session) => {
        await this.ensureLedger(session)
        await this.ensureTable(session, schema)
      })
    } catch (error) {
      const failure = classify(error, this.target(schema.namespace))
      throw failure.retryable ? failure : permanent(failure)
    }
  }

  async write(batch: SinkBatch): Promise<WriteOutcome> {
    let target = this.target(BATCHES_TABLE)
    const staged: string[] = []
    let session: Session | undefined
    let outcome: WriteOutcome | undefined
    let healthy = true
    try {
      session = await this.sessions.take()
      await this.ensureLedger(session)
      const copies: CopyRequest[] = []
      for (const [index, part] of batch.parts.entries()) {
        target = this.target(part.namespace)
        const columns = await this.columnsFor(session, part.schema)
        const location = `${this.stage(part.namespace)}/skippr/`
        const name = stagedFileName(batch.id, index, part.namespace, part.format)
        await putFile(session, location, name, part.body)
        staged.push(`${location}${name}`)
        copies.push({
          table: this.table(part.namespace),
          columns: part.schema.fields.map((f) => columnName(columns, f)),
          location: `${location}${name}`,
          format: part.format,
        })
      }

      target = this.target(BATCHES_TABLE)
      if (!this.fenceRows.has(batch.id.pipeline)) {
        // A crash mid-write leaves its transaction open, holding the fence row this one needs.
        await abortDetached(session, this.table(FENCES_TABLE), batch.id.pipeline, batch.fence, this.logger)
        await this.ledger.ensureFenceRow(session, batch.id.pipeline)
        this.fenceRows.add(batch.id.pipeline)
      }
      outcome = await this.land(session, batch, copies, (namespace) => {
        target = this.target(namespace)
      })
      return outcome
    } catch (error) {
      const failure = classify(error, target)
      healthy = !failure.retryable
      return failure.retryable ? retryLater(failure) : cannotLand(failure)
    } finally {
      // A landed batch's COPYs purged its files; any other may have left some.
      if (outcome?.status !== 'landed' && session?.isUp())
        for (const location of staged) await removeFile(session, location)
      if (session) this.sessions.give(session, healthy)
    }
  }

  /**
   * The batch's one transaction; only a batch that landed commits, anything else rolls back.
   * `onTable` is told which table is being loaded, so a failure names it.
   */
  private async land(
    session: Session,
    batch: SinkBatch,
    copies: readonly CopyRequest[],
    onTable: (namespace: string) => void,
  ): Promise<WriteOutcome> {
    await session.run(
      `BEGIN NAME ${transactionName(this.table(FENCES_TABLE), batch.id.pipeline, batch.fence)}`,
    )
    let step: Step
    try {
      step = await this.transactionSteps(session, batch, copies, onTable)
      if (step.kind === 'commit') {
        await session.run('COMMIT')
        this.logger.debug('batch landed', {
          pipeline: batch.id.pipeline,
          seq: batch.id.seq.toString(),
          rows: step.rows,
        })
        return landed(step.rows)
      }
    } catch (error) {
      await rollback(session)
      throw error
    }
    await rollback(session)
    // The copies ran before the ledger was asked: a batch that landed before (whose COPY Snowflake
    // may skip as loaded, a row-count mismatch) or that a newer writer fenced is answered as such.
    const status = await this.ledger.status(session, batch.id)
    if (status.attempt !== undefined) return alreadyLanded()
    if (status.highest !== undefined && status.highest > batch.fence)
      return this.fenced(batch, status.highest)
    if (step.kind === 'outcome') return step.outcome
    const found = await this.refused(session, copies, step.part)
    if (found.length === 0) throw step.cause
    return refused(found)
  }

  /** Inside the transaction: the fence row held, the copies and their counts, the ledger row. */
  private async transactionSteps(
    session: Session,
    batch: SinkBatch,
    copies: readonly CopyRequest[],
    onTable: (namespace: string) => void,
  ): Promise<Step> {
    if (!(await this.ledger.hold(session, batch.id.pipeline, batch.fence))) {
      // The fence row was deleted by hand: nothing is held; it is made again on the retry.
      this.fenceRows.delete(batch.id.pipeline)
      const gone = `the fence row of pipeline ${batch.id.pipeline} in ${this.table(FENCES_TABLE)} is gone`
      return { kind: 'outcome', outcome: retryLater(new Error(gone)) }
    }
    let rows = 0
    for (const [index, part] of batch.parts.entries()) {
      onTable(part.namespace)
      let loaded: number
      try {
        loaded = await copyPart(session, copies[index] as CopyRequest)
      } catch (error) {
        if (refusesValues(error)) return { kind: 'refused', cause: error, part: index }
        throw error
      }
      // Snowflake's count of what it loaded, against the source's: a record read differently (or a
      // file skipped as loaded before) must not land as a smaller batch.
      if (loaded !== part.rows) {
        const mismatch = new RowCountMismatchError({
          target: `table ${this.table(part.namespace)}`,
          batch: batchKey(batch.id),
          expected: part.rows,
          loaded,
        })
        return { kind: 'outcome', outcome: cannotLand(mismatch) }
      }
      rows += loaded
    }
    onTable(BATCHES_TABLE)
    if (await this.ledger.record(session, batch.id, batch.fence, randomUUID()))
      return { kind: 'commit', rows }
    const unrecorded = `batch ${batchKey(batch.id)} was neither recorded in ${this.table(BATCHES_TABLE)} nor found there`
    return { kind: 'outcome', outcome: retryLater(new Error(unrecorded)) }
  }

  /** Logs in and reads the warehouse, then logs out; creates nothing. */
  async check(): Promise<void> {
    try {
      this.sessions.give(await this.sessions.take(), true)
    } catch (error) {
      throw classify(error, `database ${this.config.database}`)
    } finally {
      await this.close()
    }
  }

  async count(namespace: string): Promise<number> {
    return this.scalar(namespace, (table) => `SELECT COUNT(*) AS "n" FROM ${table}`)
  }

  async duplicates(namespace: string, key: readonly string[]): Promise<number> {
    const columns = key.map(ident).join(', ')
    return this.scalar(
      namespace,
      (table) =>
        `SELECT COUNT(*) - (SELECT COUNT(*) FROM (SELECT DISTINCT ${columns} FROM ${table})) AS "n" FROM ${table}`,
    )
  }

  async close(): Promise<void> {
    await this.sessions.closeAll()
  }

  private async scalar(namespace: string, sql: (table: string) => string): Promise<number> {
    try {
      return await this.withSession(async (session) => {
        if (!(await this.describe(session, namespace))) return 0
        const rows = await session.run(sql(this.table(namespace)))
        return Number(rows[0]?.n ?? 0)
      })
    } catch (error) {
      throw classify(error, this.target(namespace))
    }
  }

  /**
   * The refused values of the parts from `from` on (the transaction was rolled back; VALIDATION_MODE
   * loads nothing); the parts before it loaded, so they hold none.
   */
  private async refused(
    session: Session,
    copies: readonly CopyRequest[],
    from: number,
  ): Promise<RefusedRow[]> {
    const found: RefusedRow[] = []
    for (const [index, copy] of copies.entries())
      if (index >= from) found.push(...(await refusedRows(session, index, copy)))
    return found
  }

  private fenced(batch: SinkBatch, highest: bigint): WriteOutcome {
    return cannotLand(
      new FencedError(batch.id.pipeline, batch.fence, highest, `Snowflake ${this.target(FENCES_TABLE)}`),
    )
  }

  /** The ledger tables, made once per instance (CREATE … IF NOT EXISTS: two writes may both). */
  private async ensureLedger(session: Session): Promise<void> {
    if (this.ledgerMade) return
    await this.ledger.create(session)
    this.ledgerMade = true
  }

  /** `work` on a session of the pool, given back after it (logged out if `work` failed). */
  private async withSession<T>(work: (session: Session) => Promise<T>): Promise<T> {
    const session = await this.sessions.take()
    let healthy = false
    try {
      const result = await work(session)
      healthy = true
      return result
    } finally {
      this.sessions.give(session, healthy)
    }
  }

  /** A new session, with the warehouse checked. */
  private async login(): Promise<Session> {
    const session = await Session.open(this.config)
    try {
      const [row] = await session.run('SELECT CURRENT_WAREHOUSE()')
      const warehouse = Object.values(row ?? {})[0]
      if (warehouse === null || warehouse === undefined)
        throw new SnowflakeError(
          SNOWFLAKE_REFUSED,
          `Snowflake warehouse ${this.config.warehouse}: it does not exist or the role may not use it; check warehouse and role`,
          '000606',
          false,
        )
    } catch (error) {
      await session.close().catch(() => {})
      throw error
    }
    return session
  }

  /** The table's columns from Snowflake; undefined when it does not exist. */
  private async describe(session: Session, namespace: string): Promise<Columns | undefined> {
    try {
      const rows = await session.run(`DESCRIBE TABLE ${this.table(namespace)}`)
      const columns: Columns = new Map(rows.map((r) => [String(r.name), baseType(String(r.type))]))
      this.tables.set(namespace, columns)
      return columns
    } catch (error) {
      if (codeOf(error) === '002003') return undefined
      throw error
    }
  }

  /** The table's columns, brought up to the part's schema first if this instance does not know them. */
  private async columnsFor(session: Session, schema: NamespaceSchema): Promise<Columns> {
    const known = this.tables.get(schema.namespace)
    if (known && schema.fields.every((f) => known.has(f.name))) return known
    await this.ensureTable(session, schema)
    return this.tables.get(schema.namespace) as Columns
  }

  /** Creates the table, adds missing columns, widens columns: what `prepare` promises. */
  private async ensureTable(session: Session, schema: NamespaceSchema): Promise<void> {
    const table = this.table(schema.namespace)
    const columns = await this.describe(session, schema.namespace)
    if (!columns) {
      const list = schema.fields.map((f) => `${ident(f.name)} ${columnType(f.type)}`).join(', ')
      await session.run(`CREATE TABLE IF NOT EXISTS ${table} (${list})`)
      await this.describe(session, schema.namespace)
      return
    }
    const rewrites = new Map<string, string>()
    for (const field of schema.fields) {
      const name = existingName(columns, field.name)
      if (name === undefined) {
        await session.run(`ALTER TABLE ${table} ADD COLUMN ${ident(field.name)} ${columnType(field.type)}`)
        continue
      }
      const have = columns.get(name) as string
      const change = changeFor(have, field.type)
      if (change === 'refused')
        throw new SnowflakeError(
          SNOWFLAKE_REFUSED,
          `Snowflake ${this.target(schema.namespace)}: column ${name} is ${have}, which cannot hold field ${field.name} (${field.type}, a ${columnType(field.type)}); change the column or the source`,
          'type',
          false,
        )
      if (change === 'alter')
        await session.run(
          `ALTER TABLE ${table} ALTER COLUMN ${ident(name)} SET DATA TYPE ${columnType(field.type)}`,
        )
      if (change === 'rewrite') rewrites.set(name, rewriteExpression(ident(name), have, field.type))
    }
    if (rewrites.size > 0) {
      // Snowflake changes no column's type class in place: the table is rewritten in one statement.
      const select = [...columns.keys()]
        .map((name) => (rewrites.has(name) ? `${rewrites.get(name)} AS ${ident(name)}` : ident(name)))
        .join(', ')
      await session.run(`CREATE OR REPLACE TABLE ${table} COPY GRANTS AS SELECT ${select} FROM ${table}`)
    }
    await this.describe(session, schema.namespace)
  }

  private table(name: string): string {
    return `${configName(this.config.database)}.${configName(this.config.schema)}.${ident(name)}`
  }

  /** The stage a table's parts go to: the configured named stage, else the table's own. */
  private stage(namespace: string): string {
    if (this.config.stage) return `@${dottedName(this.config.stage)}`
    return `@${configName(this.config.database)}.${configName(this.config.schema)}.%${ident(namespace)}`
  }

  private target(table: string): string {
    return `table ${this.config.database}.${this.config.schema}.${table}`
  }
}

/** The column holding `field`: its exact name, else one differing only in case. */
function columnName(columns: Columns, field: Field): string {
  return existingName(columns, field.name) ?? field.name
}

function existingName(columns: Columns, name: string): string | undefined {
  if (columns.has(name)) return name
  const lower = name.toLowerCase()
  return [...columns.keys()].find((c) => c.toLowerCase() === lower)
}

async function rollback(session: Session): Promise<void> {
  await session.run('ROLLBACK').catch(() => {})
}
