/**
 * An HttpServer pipeline synced by two processes sharing one DATA_DIR (its state store and lease),
 * as two hosts behind a load balancer would be: the one without the writer lease answers 503 +
 * Retry-After on its own address while it waits, and takes over once the holder stops; every
 * request answered 200 by either lands once. Through the real CLI into PostgreSQL.
 */
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePorts } from '@skippr/test-servers'
import pg from 'pg'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { exited } from './support/cli.js'
import { httpPushConfig, postUntilCommitted, startSync, stopSync } from './support/http-push.js'
import { type Project, project } from './support/project.js'

const PG_URL = process.env.SKIPPR_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const admin = new pg.Pool({ connectionString: PG_URL, max: 2 })
const cleanups: (() => Promise<unknown>)[] = []

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})
afterAll(async () => {
  await admin.end()
})

async function node(port: number, schema: string): Promise<Project> {
  const p = await project(
    httpPushConfig(port, `Postgres: { connection_string: \${WAREHOUSE_URL}, schema: ${schema} }`),
  )
  cleanups.push(() => p.remove())
  return p
}

/**
 * Two projects of the same pipeline sharing one DATA_DIR (its state store and lease) and one fresh
 * PostgreSQL schema, as two hosts would; on one port of this host with `samePort`.
 */
async function twoNodes(samePort: boolean) {
  const schema = `skippr_standby_${randomBytes(5).toString('hex')}`
  cleanups.push(() => admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))
  const [portA, portB = portA] = (await freePorts(samePort ? 1 : 2)) as [number, number?]
  const a = await node(portA, schema)
  const b = await node(portB, schema)
  return {
    schema,
    portA,
    portB,
    a,
    b,
    env: { WAREHOUSE_URL: PG_URL, DATA_DIR: path.join(a.dir, 'shared-data') },
  }
}

/** The answer to one POST, or 0 when the connection was refused. */
async function post(
  port: number,
  body: string,
): Promise<{ status: number; retryAfter: string | null; text: string }> {
  return fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    body,
    signal: AbortSignal.timeout(5_000),
  }).then(
    async (response) => ({
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      text: await response.text(),
    }),
    () => ({ status: 0, retryAfter: null, text: '' }),
  )
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const value = await probe()
    if (done(value)) return value
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`)
    await sleep(100)
  }
}

describe('HttpServer without the writer lease', () => {
  it('answers 503 + Retry-After while another sync holds the lease, then takes over; every 200 lands once', async () => {
    const { schema, portA, portB, a, b, env } = await twoNodes(false)
    const deadline = Date.now() + 60_000

    const holder = startSync({ cwd: a.dir, pipeline: 'push', port: portA, env })
    cleanups.push(() => stopSync(holder))
    await postUntilCommitted(portA, 'a-1', '{"n":1}\n{"n":2}\n', deadline)

    const waiter = startSync({ cwd: b.dir, pipeline: 'push', port: portB, env })
    cleanups.push(() => stopSync(waiter))
    const standing = await until(
      () => post(portB, '{"n":99}\n'),
      (r) => r.status === 503,
      'the standby',
    )
    expect(standing.retryAfter).toBe('1')
    expect(JSON.parse(standing.text).error).toContain('does not hold the writer lease of pipeline push')
    // The holder still takes requests meanwhile.
    await postUntilCommitted(portA, 'a-2', '{"n":3}\n', deadline)

    await stopSync(holder)
    await postUntilCommitted(portB, 'b-1', '{"n":4}\n{"n":5}\n', deadline)

    const landed = async () =>
      (
        await admin
          .query(`SELECT array_agg(n ORDER BY n)::int[] AS ns FROM "${schema}".events`)
          .catch(() => ({ rows: [{ ns: null }] }))
      ).rows[0].ns as number[] | null
    // n = 99 was answered 503 and is nowhere.
    expect(await until(landed, (ns) => ns?.length === 5, 'every committed row landed')).toEqual([
      1, 2, 3, 4, 5,
    ])
  })

  it('a SIGTERM ends the wait for the lease at once, and the standby with it', async () => {
    const { portA, portB, a, b, env } = await twoNodes(false)
    const holder = startSync({ cwd: a.dir, pipeline: 'push', port: portA, env })
    cleanups.push(() => stopSync(holder))
    await postUntilCommitted(portA, 'a-1', '{"n":1}\n', Date.now() + 60_000)
    const waiter = startSync({ cwd: b.dir, pipeline: 'push', port: portB, env })
    cleanups.push(() => stopSync(waiter))
    await until(
      () => post(portB, '{"n":2}\n'),
      (r) => r.status === 503,
      'the standby',
    )
    waiter.kill('SIGTERM')
    // Well inside the lease wait (45 s by default), which the stop used to sit out.
    const code = await Promise.race([exited(waiter), sleep(15_000).then(() => 'still waiting')])
    expect(code).toEqual({ code: 0, signal: null })
    expect((await post(portB, '{"n":3}\n')).status).toBe(0)
  })

  it('waits without standing by when the holder listens on the same address of this host', async () => {
    const { portA: port, a, b, env } = await twoNodes(true)
    const deadline = Date.now() + 60_000

    const holder = startSync({ cwd: a.dir, pipeline: 'push', port, env })
    cleanups.push(() => stopSync(holder))
    await postUntilCommitted(port, 'a-1', '{"n":1}\n', deadline)
    const waiter = startSync({ cwd: b.dir, pipeline: 'push', port, env })
    cleanups.push(() => stopSync(waiter))
    await sleep(1_500)
    expect(waiter.exitCode).toBeNull()
    await stopSync(holder)
    await postUntilCommitted(port, 'b-1', '{"n":2}\n', deadline)
    expect(waiter.exitCode).toBeNull()
  })
})
