import { makeBatch } from '@skippr/conformance'
import type { NamespaceSchema, Sink } from '@skippr/connector-api'
import { isPermanent, silentLogger } from '@skippr/connector-api'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  AUTHENTICATION_FAILED,
  ClickhouseSink,
  RESERVED_NAME,
  STATEMENT_REJECTED,
  UNAVAILABLE,
  UNSUPPORTED_COLUMN,
} from '../src/index.js'
import { startTestServer, type TestServer } from './servers.js'

let server: TestServer
const open: Sink[] = []
beforeAll(async () => {
  server = await startTestServer()
})
afterEach(async () => {
  for (const sink of open.splice(0)) await sink.close()
})
afterAll(async () => server?.stop())

const schema: NamespaceSchema = {
  namespace: 'items',
  fields: [{ name: 'id', type: 'long' }],
  primaryKey: ['id'],
}
const batch = makeBatch({
  pipeline: 'failures',
  seq: 1,
  parts: [{ schema, format: 'csv', rows: [{ id: 1 }] }],
})

function track<S extends Sink>(sink: S): S {
  open.push(sink)
  return sink
}

async function prepareError(sink: Sink, of: NamespaceSchema = schema): Promise<Error & { code?: string }> {
  return sink.prepare(of).then(
    () => {
      throw new Error('prepare succeeded')
    },
    (error: Error) => error,
  )
}

describe('failures', () => {
  it('a wrong password stops for good with one line naming server and user, never the password', async () => {
    const password = 'not-the-password-4711'
    const sink = track(server.sink({ database: server.database('auth'), password }))
    const error = await prepareError(sink)
    expect({ code: error.code, permanent: isPermanent(error) }).toEqual({
      code: AUTHENTICATION_FAILED,
      permanent: true,
    })
    expect(error.message).not.toContain('\n')
    expect(error.message).toContain(server.clickhouse.url)
    expect(error.message).toContain(server.clickhouse.user)
    const outcome = await sink.write(batch)
    expect(outcome.status).toBe('fatal')
    for (const text of [
      error.message,
      error.stack,
      JSON.stringify(error),
      'error' in outcome ? outcome.error.message : '',
    ])
      expect(text).not.toContain(password)
  })

  it('an unreachable server is retried, and the message has no password', async () => {
    const password = 'secret-0815'
    const sink = track(
      new ClickhouseSink({ url: 'http://127.0.0.1:1', username: 'someone', password }, silentLogger),
    )
    const outcome = await sink.write(batch)
    expect(outcome.status).toBe('retry')
    const error = 'error' in outcome ? (outcome.error as Error & { code?: string }) : undefined
    expect(error?.code).toBe(UNAVAILABLE)
    expect(error?.message).toContain('http://127.0.0.1:1')
    expect(`${error?.message} ${error?.stack}`).not.toContain(password)
    const failed = await prepareError(sink)
    expect({ code: failed.code, permanent: isPermanent(failed) }).toEqual({
      code: UNAVAILABLE,
      permanent: false,
    })
  })

  it('a table deleted after prepare makes the write fatal, naming the table', async () => {
    const database = server.database('dropped')
    const sink = track(server.sink({ database }))
    await sink.prepare(schema)
    await server.clickhouse.query(`DROP TABLE ${database}.items`)
    const outcome = await sink.write(batch)
    expect({
      status: outcome.status,
      code: 'error' in outcome && (outcome.error as { code?: string }).code,
    }).toEqual({
      status: 'fatal',
      code: STATEMENT_REJECTED,
    })
    expect('error' in outcome && outcome.error.message).toContain(`\`${database}\`.\`items\``)
  })

  it('a column of a type the sink does not write makes the write fatal, nothing inserted', async () => {
    const database = server.database('foreign')
    await server.clickhouse.query(`CREATE DATABASE ${database}`)
    await server.clickhouse.query(
      `CREATE TABLE ${database}.items (id DateTime, _skippr_batch String) ENGINE = MergeTree ORDER BY id`,
    )
    const sink = track(server.sink({ database }))
    await sink.prepare(schema)
    const outcome = await sink.write(batch)
    expect({
      status: outcome.status,
      code: 'error' in outcome && (outcome.error as { code?: string }).code,
    }).toEqual({
      status: 'fatal',
      code: UNSUPPORTED_COLUMN,
    })
    expect(await server.rows(database, 'items')).toEqual([])
  })

  it('refuses names that clash with the bookkeeping, for good', async () => {
    const sink = track(server.sink({ database: server.database('reserved') }))
    for (const clash of [
      { ...schema, namespace: '_skippr_batches' },
      { ...schema, fields: [...schema.fields, { name: '_skippr_batch', type: 'string' as const }] },
    ]) {
      const error = await prepareError(sink, clash)
      expect({ code: error.code, permanent: isPermanent(error) }).toEqual({
        code: RESERVED_NAME,
        permanent: true,
      })
    }
  })
})
