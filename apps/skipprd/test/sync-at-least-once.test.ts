/**
 * The at-least-once destinations through the CLI, against a ClickHouse server started here and the
 * local RabbitMQ: a sync lands every row tagged with its part key, and bad input gets one clear
 * line — for good when no retry can fix it (wrong credentials, a missing exchange), as "retry
 * later" when the server is unreachable — and never the password.
 */
import { randomBytes } from 'node:crypto'
import { type Clickhouse, startClickhouse } from '@skippr/test-servers'
import amqp from 'amqplib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { failure, SYNC_ROWS, useSinkSync } from './support/sink-sync.js'

const AMQP_URL = process.env.SKIPPR_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672/'
const ROWS = SYNC_ROWS

const { syncInto } = useSinkSync()

describe('Clickhouse', () => {
  let server: Clickhouse
  beforeAll(async () => {
    server = await startClickhouse()
  })
  afterAll(async () => {
    await server?.stop()
  })
  const entry = (database: string) =>
    `Clickhouse: { url: "${server.url}", database: ${database}, username: ${server.user}, password: "\${CH_PASSWORD}" }`

  it('lands every row once, each tagged with its part key; a second run adds nothing', async () => {
    const database = `skippr_cli_${randomBytes(4).toString('hex')}`
    const env = { CH_PASSWORD: server.password }
    const first = await syncInto(entry(database), env)
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    const counts = await server.query(
      `SELECT count(), uniqExact(rental_id), countIf(match(_skippr_batch, '^bikehire/[0-9a-f]+/[0-9]{12}/0$'))
       FROM ${database}.rentals FORMAT TSV`,
    )
    expect(counts.trim().split('\t').map(Number)).toEqual([ROWS, ROWS, ROWS])
    const again = await syncInto(entry(database), env)
    expect(again.code).toBe(0)
    expect(await server.query(`SELECT count() FROM ${database}.rentals FORMAT TSV`)).toBe(`${ROWS}\n`)
  })

  it('a wrong password: exit 1 at once, one line naming server and user, never the password', async () => {
    const wrong = 'not-the-password-7731'
    const run = await syncInto(entry('skippr_cli_auth'), { CH_PASSWORD: wrong })
    expect(run.code).toBe(1)
    expect(run.stderr).not.toContain(wrong)
    expect(run.stdout).not.toContain(wrong)
    const { lines, last } = failure(run.stderr)
    expect(lines).toBe(1)
    expect(last).toContain(server.url)
    expect(last).toContain(server.user)
    expect(run.stderr).not.toMatch(/retry later/)
  })

  it('an unreachable server: retried until the budget is spent, then "retry later", never the password', async () => {
    const secret = 'hidden-pw-5521'
    const run = await syncInto(
      `Clickhouse: { url: "http://127.0.0.1:1", password: "\${CH_PASSWORD}" }`,
      { CH_PASSWORD: secret, SKIPPR_RETRY_BUDGET_SECONDS: '2' },
      10,
    )
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(/retry later/)
    expect(run.stderr).toContain('127.0.0.1:1')
    expect(`${run.stdout}${run.stderr}`).not.toContain(secret)
  })
})

describe('Amqp', () => {
  let connection: amqp.ChannelModel
  let channel: amqp.Channel
  const name = `skippr_cli_${randomBytes(4).toString('hex')}`
  beforeAll(async () => {
    connection = await amqp.connect(AMQP_URL, { noDelay: true })
    channel = await connection.createChannel()
    await channel.assertExchange(name, 'topic', { durable: false })
    await channel.assertQueue(name, { durable: false })
    await channel.bindQueue(name, name, '#')
  })
  afterAll(async () => {
    await channel?.deleteQueue(name)
    await channel?.deleteExchange(name)
    await connection?.close()
  })
  const entry = (exchange: string) => `Amqp: { url: "\${AMQP_URL}", exchange: ${exchange} }`

  it('publishes every row once, each message naming its part and row', async () => {
    const run = await syncInto(entry(name), { AMQP_URL })
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const { messageCount } = await channel.checkQueue(name)
    expect(messageCount).toBe(ROWS)
    const first = await channel.get(name, { noAck: true })
    if (first === false) throw new Error(`queue ${name} holds no message`)
    expect(JSON.parse(first.content.toString()).rental_id).toBe(1)
    expect(first.properties.messageId).toMatch(/^bikehire\/[0-9a-f]+\/000000000001\/0:0$/)
    await channel.purgeQueue(name)
  })

  it('a missing exchange: exit 1 at once, one line naming the exchange, never the password', async () => {
    const missing = `${name}_missing`
    const run = await syncInto(entry(missing), { AMQP_URL })
    expect(run.code).toBe(1)
    expect(failure(run.stderr)).toMatchObject({ lines: 1, last: expect.stringContaining(missing) })
    expect(run.stderr).not.toMatch(/retry later/)
    expect(run.stderr).not.toContain(new URL(AMQP_URL).password || '\0')
  })

  it('wrong credentials: exit 1 at once, never the password', async () => {
    const url = new URL(AMQP_URL)
    url.password = 'wrong-secret-9902'
    const run = await syncInto(entry(name), { AMQP_URL: url.toString() })
    expect(run.code).toBe(1)
    expect(failure(run.stderr)).toMatchObject({ lines: 1, last: expect.stringMatching(/refused access/) })
    expect(run.stderr).not.toContain('wrong-secret-9902')
    expect(run.stderr).not.toMatch(/retry later/)
  })
})
