import { existsSync } from 'node:fs'
import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Clickhouse, startClickhouse, startZookeeper, type Zookeeper } from '../src/index.js'

const START_TIMEOUT_MS = 60_000

describe('ClickHouse with ZooKeeper', () => {
  let zookeeper: Zookeeper
  let clickhouse: Clickhouse
  beforeAll(async () => {
    zookeeper = await startZookeeper()
    clickhouse = await startClickhouse({ zookeeper })
  }, START_TIMEOUT_MS)
  afterAll(async () => {
    await clickhouse?.stop()
    await zookeeper?.stop()
  })

  it('runs ClickHouse 18 or later', async () => {
    const version = await clickhouse.query('SELECT version()')
    expect(Number(version.split('.')[0])).toBeGreaterThanOrEqual(18)
  })

  it('deduplicates a block inserted again into a ReplicatedMergeTree table', async () => {
    await clickhouse.query('CREATE DATABASE dedup')
    await clickhouse.query(
      `CREATE TABLE dedup.rows (id UInt32, value String)
       ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/dedup/rows', '{replica}') ORDER BY id`,
    )
    const insert = (values: string[]) =>
      clickhouse.query(
        `INSERT INTO dedup.rows FORMAT JSONEachRow\n${values.map((value) => JSON.stringify({ id: 1, value })).join('\n')}`,
      )
    const count = async () => Number(await clickhouse.query('SELECT count() FROM dedup.rows'))
    for (let i = 0; i < 3; i++) await insert(['a', 'a', 'a'])
    expect(await count()).toBe(3)
    await insert(['a', 'a', 'b'])
    expect(await count()).toBe(6)
  })

  it('lets in the passwordless default user and refuses a wrong password', async () => {
    // An idle keep-alive connection would hold up the server's stop.
    const get = (sql: string, headers: Record<string, string> = {}) =>
      fetch(`${clickhouse.url}/?query=${encodeURIComponent(sql)}`, {
        headers: { connection: 'close', ...headers },
      })
    expect(await (await get('SELECT currentDatabase()')).text()).toBe('default\n')
    const wrong = `Basic ${Buffer.from(`${clickhouse.user}:not-${clickhouse.password}`).toString('base64')}`
    expect((await get('SELECT 1', { authorization: wrong })).status).not.toBe(200)
  })

  it('throws the server message for a bad query', async () => {
    await expect(clickhouse.query('SELEC 1')).rejects.toThrow(/Syntax error/)
  })

  it('frees the ports and removes the temp dirs on stop', async () => {
    await clickhouse.stop()
    await zookeeper.stop()
    for (const port of [clickhouse.httpPort, clickhouse.tcpPort, zookeeper.port]) {
      expect(await refusesConnections(port)).toBe(true)
    }
    expect(existsSync(clickhouse.dir)).toBe(false)
    expect(existsSync(zookeeper.dir)).toBe(false)
  }, 30_000)
})

describe('ClickHouse alone', () => {
  it(
    'starts without ZooKeeper, answers SELECT 1 and stops',
    async () => {
      const clickhouse = await startClickhouse({ password: 'given' })
      try {
        expect(clickhouse.password).toBe('given')
        expect(await clickhouse.query('SELECT 1')).toBe('1\n')
      } finally {
        await clickhouse.stop()
      }
      expect(await refusesConnections(clickhouse.httpPort)).toBe(true)
      expect(existsSync(clickhouse.dir)).toBe(false)
    },
    START_TIMEOUT_MS,
  )
})

function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy()
      resolve(false)
    })
    socket.on('error', () => resolve(true))
  })
}
