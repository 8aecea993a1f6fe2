/**
 * A writer killed (SIGKILL, as the chaos harness kills skipprd) inside its batch's transaction
 * leaves it open, holding the fence row. The next writer, holding the lease with a higher token,
 * aborts it at its first write and lands within seconds, not after Snowflake's 5 minutes (the fake
 * keeps that rule: `detachedTransactionMs` left at its default); every row once. A transaction of
 * another program is left alone.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import type { FakeSnowflake } from '@skippr/test-servers'
import snowflake from 'snowflake-sdk'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openSink, SCHEMA, sinkConfig, startFakeSnowflake } from './fake.js'
import { crashBatch, crashSchema } from './fixtures/crash-batch.js'

const FIXTURE = fileURLToPath(new URL('./fixtures/write-batch.ts', import.meta.url))
/** Far below the fake's 5 minutes, and room for a loaded machine. */
const LANDS_WITHIN_MS = 20_000

let server: FakeSnowflake
beforeAll(async () => {
  server = await startFakeSnowflake()
})
afterAll(async () => server.stop())

/** Runs the fixture until the fake has run its COPY (answer held back), then SIGKILLs it. */
async function killMidTransaction(namespace: string, fence: number): Promise<void> {
  server.holdResponse(/^COPY INTO/)
  const args = JSON.stringify({ config: sinkConfig(server), namespace, seq: 1, fence })
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  try {
    const started = Date.now()
    while (!server.requests.some((r) => r.includes('COPY INTO'))) {
      if (child.exitCode !== null) throw new Error(`the writer exited (${child.exitCode}) before its COPY`)
      if (Date.now() - started > 60_000) throw new Error('the writer never reached its COPY')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  } finally {
    child.kill('SIGKILL')
    if (child.exitCode === null && child.signalCode === null) await once(child, 'exit')
  }
}

/** A session of another program, through the driver (its log off, as the sink sets it). */
async function connect(): Promise<snowflake.Connection> {
  snowflake.configure({ logLevel: 'OFF' })
  const connection = snowflake.createConnection({
    account: server.account,
    username: server.username,
    password: server.password,
    warehouse: server.warehouse,
    database: server.database,
    accessUrl: server.accessUrl,
  })
  await new Promise<void>((resolve, reject) => connection.connect((e) => (e ? reject(e) : resolve())))
  return connection
}

function run(connection: snowflake.Connection, sqlText: string): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) =>
    connection.execute({
      sqlText,
      complete: (e, _s, rows) => (e ? reject(e) : resolve((rows ?? []) as Record<string, unknown>[])),
    }),
  )
}

/** The names of the open transactions, as SHOW TRANSACTIONS lists them. */
async function openTransactionNames(): Promise<string[]> {
  const connection = await connect()
  try {
    return (await run(connection, 'SHOW TRANSACTIONS')).map((r) => String(r.name))
  } finally {
    await new Promise<void>((resolve) => connection.destroy(() => resolve()))
  }
}

it(
  'a writer killed mid-transaction: the next writer aborts its transaction and lands in seconds, every row once',
  async () => {
    const namespace = 'crashed'
    const other = await connect()
    await run(other, 'BEGIN NAME OTHER_APP_1')
    await killMidTransaction(namespace, 1)
    expect((await openTransactionNames()).filter((n) => n.startsWith('SKIPPR_'))).toHaveLength(1)

    const sink = openSink(server)
    await sink.prepare(crashSchema(namespace))
    const started = Date.now()
    expect(await sink.write(crashBatch(namespace, 1, 2))).toEqual({ status: 'landed', rows: 5 })
    expect(Date.now() - started).toBeLessThan(LANDS_WITHIN_MS)
    expect(await server.rows(SCHEMA, namespace)).toHaveLength(5)
    expect(await sink.duplicates(namespace, ['id'])).toBe(0)
    await sink.close()
    // The other program's transaction is still open: only the sink's own were aborted.
    expect(await openTransactionNames()).toEqual(['OTHER_APP_1'])
    await new Promise<void>((resolve) => other.destroy(() => resolve()))
  },
  LANDS_WITHIN_MS + 60_000,
)
