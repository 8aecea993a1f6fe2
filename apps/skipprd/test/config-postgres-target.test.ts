/**
 * The PostgreSQL sink's "cannot reach" line through the built CLI: it shows where it tried to
 * connect, `postgres://user@host:port/db`, and never the password. The connection string is a
 * secret field, so this also proves that registering it for masking does not mask the address.
 */
import { createServer } from 'node:net'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { type Project, project } from './support/project.js'

let p: Project
let closedPort: number
beforeEach(async () => {
  p = await project(
    `data_sources:\n  sample:\n    Sample: { dataset: bikehire, rows: 10 }\ndata_sinks:\n  warehouse:\n    Postgres: { connection_string: \${WAREHOUSE_URL} }\npipelines:\n  bikehire:\n    data_source: data_sources.sample\n    data_sink: data_sinks.warehouse\n`,
  )
  closedPort = await freePort()
})
afterEach(async () => {
  await p.remove()
})

/** A loopback port nothing listens on: it was free a moment ago and is closed again. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

const sync = (url: string) =>
  runCli(['sync', '--once', '--output', 'text'], {
    cwd: p.dir,
    env: { WAREHOUSE_URL: url, SKIPPR_RETRY_BUDGET_SECONDS: '0' },
  })

it.each([
  ['without a password', (port: number) => `postgres://app@127.0.0.1:${port}/shop`],
  [
    'with a password and query',
    (port: number) => `postgres://app:hunter22@127.0.0.1:${port}/shop?sslmode=disable`,
  ],
])('names user, host, port and database %s', async (_, url) => {
  const result = await sync(url(closedPort))
  expect(result.code).toBe(1)
  expect(result.stderr).toContain(`cannot reach PostgreSQL at postgres://app@127.0.0.1:${closedPort}/shop: `)
  const everything = [result.stdout, result.stderr, await p.logs()].join('\n')
  expect(everything).not.toContain('hunter22')
  expect(everything).not.toContain('sslmode=disable')
})
