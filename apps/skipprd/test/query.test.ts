/**
 * `skipprd query` run as a user runs it: the built CLI in a project directory, over WAL data that a
 * real `sync` (Sample source, no destination) or the WAL package itself wrote.
 */
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { exited, runCli, spawnCli } from './support/cli.js'
import { type Project, project } from './support/project.js'
import { landBatches, schema, seedWal, walOnlyConfig } from './support/query-fixtures.js'

const made: Project[] = []
afterAll(async () => {
  for (const p of made) await p.remove()
})

async function open(pipelines: readonly string[], rows?: number): Promise<Project> {
  const p = await project(walOnlyConfig(pipelines, rows))
  made.push(p)
  return p
}

const dataDir = (p: Project) => path.join(p.dir, 'data')

const ORDERS = schema('orders', [
  { name: 'id', type: 'long' },
  { name: 'name', type: 'string' },
  { name: 'price', type: 'double' },
  { name: 'paid', type: 'boolean' },
  { name: 'at', type: 'timestamp' },
  { name: 'day', type: 'date' },
  { name: 'meta', type: 'json' },
])

// Each test has its own project; they run side by side (each mostly waits on child processes).
describe.concurrent('skipprd query --sql', { timeout: 120_000 }, () => {
  it('--plain prints {"header":[...],"rows":[[...]]} with every value a string, NULL as "NULL"', async () => {
    const p = await open(['shop'])
    await seedWal(dataDir(p), 'shop', [
      [
        {
          schema: ORDERS,
          format: 'csv',
          lines: [
            '1,"Ada ""the"" first, Zoë 🚲",9.5,true,2024-01-02T03:04:05Z,2024-01-02,"{""k"":[1,2]}"',
            '2,,,false,,,',
          ],
        },
      ],
      [
        {
          schema: ORDERS,
          format: 'jsonl',
          lines: [
            '{"id":3,"name":"","price":0,"paid":true,"at":"2024-01-02T03:04:05.123+02:00","day":"2024-12-31"}',
          ],
        },
      ],
    ])
    const result = await runCli(['query', '--plain', '--sql', 'SELECT * FROM shop.orders ORDER BY id'], {
      cwd: p.dir,
    })
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(
      '{"header":["id","name","price","paid","at","day","meta"],"rows":[' +
        '["1","Ada \\"the\\" first, Zoë 🚲","9.5","true","2024-01-02 03:04:05+00","2024-01-02","{\\"k\\":[1,2]}"],' +
        '["2","NULL","NULL","false","NULL","NULL","NULL"],' +
        '["3","","0","true","2024-01-02 01:04:05.123+00","2024-12-31","NULL"]]}\n',
    )
  })

  it('shows the saved schema types, joins and aggregates across pipelines, and runs statements in order', async () => {
    const p = await open(['shop', 'crm'])
    const customers = schema('customers', [
      { name: 'id', type: 'int' },
      { name: 'country', type: 'string' },
    ])
    const orders = schema('orders', [
      { name: 'customer_id', type: 'int' },
      { name: 'amount', type: 'double' },
    ])
    await seedWal(dataDir(p), 'crm', [
      [{ schema: customers, format: 'csv', lines: ['1,"NL"', '2,"FR"', '3,"NL"'] }],
    ])
    await seedWal(dataDir(p), 'shop', [
      [{ schema: orders, format: 'csv', lines: ['1,10.5', '2,3', '3,1.5'] }],
      [{ schema: orders, format: 'jsonl', lines: ['{"customer_id":1,"amount":4}'] }],
    ])
    const sql =
      "SELECT data_type FROM information_schema.columns WHERE table_schema = 'shop' AND table_name = 'orders' ORDER BY ordinal_position;" +
      'SELECT c.country, count(*) AS orders, sum(o.amount) AS total FROM shop.orders o JOIN crm.customers c ON c.id = o.customer_id GROUP BY c.country ORDER BY c.country'
    const result = await runCli(['query', '--plain', '-s', sql], { cwd: p.dir })
    expect(result.stderr).toBe('')
    expect(result.stdout.split('\n')).toEqual([
      '{"header":["data_type"],"rows":[["INTEGER"],["DOUBLE"]]}',
      '{"header":["country","orders","total"],"rows":[["FR","1","3"],["NL","3","16"]]}',
      '',
    ])
  })

  it('reads rows written with older schema versions under the newest one', async () => {
    const p = await open(['shop'])
    const v1 = schema('users', [
      { name: 'id', type: 'int' },
      { name: 'name', type: 'string' },
    ])
    const v2 = schema('users', [
      { name: 'id', type: 'long' },
      { name: 'name', type: 'string' },
      { name: 'email', type: 'string' },
    ])
    await seedWal(dataDir(p), 'shop', [
      [{ schema: v1, format: 'csv', lines: ['1,"a"'] }],
      [{ schema: v2, format: 'csv', lines: ['5000000000,"b","b@example.com"'] }],
    ])
    const result = await runCli(
      ['query', '--plain', '-s', 'SELECT id, name, email, typeof(id) FROM shop.users ORDER BY id'],
      {
        cwd: p.dir,
      },
    )
    expect(result.stdout).toBe(
      '{"header":["id","name","email","typeof(id)"],"rows":[["1","a","NULL","BIGINT"],["5000000000","b","b@example.com","BIGINT"]]}\n',
    )
  })

  it('shows only batches not landed yet, also through the query cache of an earlier query', async () => {
    const p = await open(['shop'])
    const items = schema('items', [{ name: 'n', type: 'int' }])
    await seedWal(
      dataDir(p),
      'shop',
      [1, 2, 3].map((n) => [{ schema: items, format: 'csv' as const, lines: [`${n}`, `${n * 10}`] }]),
    )
    const sum = async () =>
      (await runCli(['query', '--plain', '-s', 'SELECT count(*), sum(n) FROM shop.items'], { cwd: p.dir }))
        .stdout
    expect(await sum()).toBe('{"header":["count_star()","sum(n)"],"rows":[["6","66"]]}\n')
    await landBatches(dataDir(p), 'shop', 2)
    expect(await sum()).toBe('{"header":["count_star()","sum(n)"],"rows":[["2","33"]]}\n')
    await seedWal(dataDir(p), 'shop', [[{ schema: items, format: 'jsonl', lines: ['{"n":7}'] }]])
    expect(await sum()).toBe('{"header":["count_star()","sum(n)"],"rows":[["3","40"]]}\n')
  })

  it('prints an aligned table without --plain', async () => {
    const p = await open(['shop'])
    const items = schema('items', [
      { name: 'n', type: 'int' },
      { name: 'label', type: 'string' },
    ])
    await seedWal(dataDir(p), 'shop', [
      [{ schema: items, format: 'csv', lines: ['1,"one"', '100,', '22,"two\nlines"'] }],
    ])
    const result = await runCli(['query', '-s', 'SELECT n, label FROM shop.items ORDER BY n'], { cwd: p.dir })
    expect(result.stdout).toBe(
      [
        'n   | label',
        '----+-----------',
        '  1 | one',
        ' 22 | two\\nlines',
        '100 | NULL',
        '(3 rows)',
        '',
      ].join('\n'),
    )
  })

  it('fails with exit code 1 and one line for an unknown pipeline or a bad statement', async () => {
    const p = await open(['shop'])
    const unknown = await runCli(['query', '-s', 'SHOW PIPELINE nope'], { cwd: p.dir })
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/^\[skippr\] config failed: Pipeline 'nope' not found in skippr\.yml/)
    const bad = await runCli(['query', '-s', 'SELECT 1; SELEC 2; SELECT 3'], { cwd: p.dir })
    expect(bad.code).toBe(1)
    expect(bad.stdout).toBe('1\n-\n1\n(1 row)\n')
    expect(bad.stderr.split('\n')[0]).toBe(
      '[skippr] query failed: Parser Error: syntax error at or near "SELEC"',
    )
  })
})

describe('skipprd query while sync writes', () => {
  it('sees a growing, consistent prefix of the committed batches and never slows or breaks the sync', async () => {
    const rows = 6000
    const p = await project(
      [
        'data_sources:',
        '  sample:',
        `    Sample: { dataset: bikehire, rows: ${rows}, batch_rows: 2 }`,
        'pipelines:',
        '  bikehire:',
        '    data_source: data_sources.sample',
        '    buffer_threshold_bytes: 1   # a commit (and fsync) every 2 rows: a long run',
        '',
      ].join('\n'),
    )
    made.push(p)
    // The saved schema must exist before the query session starts reading.
    expect((await runCli(['discover', '-p', 'bikehire'], { cwd: p.dir })).code).toBe(0)
    const query = spawnCli(['query', '--plain'], { cwd: p.dir })
    let queryErr = ''
    query.stderr?.on('data', (d: Buffer) => (queryErr += d.toString()))
    const lines = lineReader(query.stdout!)
    const ask = async () => {
      query.stdin?.write(
        'SELECT count(*), count(DISTINCT rental_id), min(rental_id), max(rental_id) FROM bikehire.rentals;\n',
      )
      const [count, distinct, min, max] = (
        JSON.parse(await lines.next()) as { rows: string[][] }
      ).rows[0]!.map(Number)
      return { count: count!, distinct: distinct!, min, max: max!, committed: await committedRows(p) }
    }
    // The session is up before the sync starts, so its snapshots fall while the sync writes.
    expect((await ask()).count).toBe(0)
    const sync = spawnCli(['sync', '-p', 'bikehire', '--once', '--output', 'text', '--log', 'debug'], {
      cwd: p.dir,
    })
    let syncOut = ''
    sync.stdout?.on('data', (d: Buffer) => (syncOut += d.toString()))
    sync.stderr?.resume()

    const seen: Awaited<ReturnType<typeof ask>>[] = []
    const syncDone = exited(sync)
    let finished = false
    void syncDone.then(() => (finished = true))
    while (!finished) {
      seen.push(await ask())
      await sleep(100)
    }
    const end = await syncDone
    seen.push(await ask())
    query.stdin?.end()
    expect(await exited(query)).toEqual({ code: 0, signal: null })
    expect(queryErr).toBe('')

    expect(end).toEqual({ code: 0, signal: null })
    expect(syncOut).toContain(`Sync complete: pipeline=bikehire namespaces=1 rows=${rows}`)
    for (const [i, s] of seen.entries()) {
      const at = `snapshot ${i}: ${JSON.stringify(s)}`
      // A prefix of whole batches: rental ids 1..count, each once.
      if (s.count > 0)
        expect({ distinct: s.distinct, min: s.min, max: s.max }, at).toEqual({
          distinct: s.count,
          min: 1,
          max: s.count,
        })
      expect(s.count % 2, at).toBe(0)
      // Commits run one at a time, and a reader may see the one whose fdatasync is still under way
      // (its commit() has not returned, so it is not logged yet): at most one batch of 2 rows.
      expect(s.count, at).toBeLessThanOrEqual(s.committed + 2)
      if (i > 0) expect(s.count, at).toBeGreaterThanOrEqual(seen[i - 1]!.count)
    }
    expect(seen.at(-1)!.count).toBe(rows)
    expect(seen.filter((s) => s.count > 0 && s.count < rows).length).toBeGreaterThan(0)
  }, 120_000)
})

/** Rows the sync had logged as committed (`batch committed`, logged right after each commit). */
async function committedRows(p: Project): Promise<number> {
  let rows = 0
  for (const line of (await p.logs()).split('\n')) {
    if (!line.includes('"msg":"batch committed"')) continue
    rows += (JSON.parse(line) as { rows: number }).rows
  }
  return rows
}

/** Reads a stream line by line. */
function lineReader(stream: NodeJS.ReadableStream): { next(): Promise<string> } {
  let buffered = ''
  const waiting: ((line: string) => void)[] = []
  const ready: string[] = []
  stream.on('data', (d: Buffer) => {
    buffered += d.toString()
    for (let at = buffered.indexOf('\n'); at !== -1; at = buffered.indexOf('\n')) {
      const line = buffered.slice(0, at)
      buffered = buffered.slice(at + 1)
      const waiter = waiting.shift()
      if (waiter) waiter(line)
      else ready.push(line)
    }
  })
  return {
    next: () => {
      const line = ready.shift()
      return line !== undefined ? Promise.resolve(line) : new Promise((resolve) => waiting.push(resolve))
    },
  }
}
