/**
 * The query session in-process: its per-pipeline cache of the WAL (a DuckDB file a later session
 * continues from), rebuilt when the schema evolves, and the in-memory fallback.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import pino from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfigFile } from '../src/config/load.js'
import type { Cell } from '../src/query/result.js'
import { cacheFile } from '../src/query/snapshot.js'
import { QuerySession } from '../src/query/sql-session.js'
import { exited, spawnCli } from './support/cli.js'
import { type Project, project } from './support/project.js'
import { schema, seedWal, walOnlyConfig } from './support/query-fixtures.js'

const made: Project[] = []
afterAll(async () => {
  for (const p of made) await p.remove()
})

async function open(): Promise<Project> {
  const p = await project(walOnlyConfig(['shop']))
  made.push(p)
  return p
}

async function session(
  p: Project,
  env: Record<string, string> = {},
  warnings: string[] = [],
): Promise<QuerySession> {
  const file = loadConfigFile({ cwd: p.dir, env })
  return QuerySession.open({
    file,
    flags: {},
    cwd: p.dir,
    warn: (m) => warnings.push(m),
    logger: pino({ level: 'silent' }),
    onSecrets: () => {},
  })
}

async function rows(s: QuerySession, sql: string): Promise<Cell[][]> {
  const result = await s.execute(sql)
  if (result.kind !== 'rows') throw new Error(`not rows: ${result.kind}`)
  const out: Cell[][] = []
  for await (const chunk of result.chunks) out.push(...chunk)
  return out
}

const V1 = schema('users', [
  { name: 'id', type: 'int' },
  { name: 'name', type: 'string' },
])
const V2 = schema('users', [...V1.fields, { name: 'plan', type: 'string' }])

describe('QuerySession', () => {
  it('keeps a cache that later sessions continue from, and rebuilds it when the schema evolves', async () => {
    const p = await open()
    const data = path.join(p.dir, 'data')
    await seedWal(data, 'shop', [[{ schema: V1, format: 'csv', lines: ['1,"a"', '2,"b"'] }]])
    const first = await session(p)
    try {
      expect(await rows(first, 'SELECT * FROM shop.users ORDER BY id')).toEqual([
        ['1', 'a'],
        ['2', 'b'],
      ])
      // Within a session every statement sees a fresh snapshot.
      await seedWal(data, 'shop', [[{ schema: V1, format: 'jsonl', lines: ['{"id":3,"name":"c"}'] }]])
      expect(await rows(first, 'SELECT count(*) FROM shop.users')).toEqual([['3']])
    } finally {
      await first.close()
    }
    expect(existsSync(cacheFile({ name: 'shop', dataDir: data }))).toBe(true)

    await seedWal(data, 'shop', [[{ schema: V2, format: 'csv', lines: ['4,"d","pro"'] }]])
    const second = await session(p)
    try {
      expect(await rows(second, 'SELECT id, name, plan FROM shop.users ORDER BY id')).toEqual([
        ['1', 'a', null],
        ['2', 'b', null],
        ['3', 'c', null],
        ['4', 'd', 'pro'],
      ])
    } finally {
      await second.close()
    }
  })

  it('reads into memory when another process holds the cache, or when SKIPPR_QUERY_CACHE=off', async () => {
    const p = await open()
    const data = path.join(p.dir, 'data')
    await seedWal(data, 'shop', [[{ schema: V1, format: 'csv', lines: ['1,"a"'] }]])
    // A prompt in another process that has read the pipeline holds its cache file.
    const holder = spawnCli(['query', '--plain'], { cwd: p.dir })
    const answered = new Promise<string>((resolve) => {
      let out = ''
      holder.stdout?.on('data', (d: Buffer) => {
        out += d.toString()
        if (out.endsWith('\n')) resolve(out)
      })
    })
    holder.stdin?.write('SELECT count(*) FROM shop.users;\n')
    expect(await answered).toBe('{"header":["count_star()"],"rows":[["1"]]}\n')
    const warnings: string[] = []
    const other = await session(p, {}, warnings)
    try {
      expect(await rows(other, 'SELECT count(*) FROM shop.users')).toEqual([['1']])
      expect(warnings).toEqual([
        expect.stringMatching(
          /^query cache .*shop\.duckdb is not usable \(.*lock.*\); reading pipeline 'shop' into memory$/,
        ),
      ])
    } finally {
      await other.close()
      holder.stdin?.end()
      await exited(holder)
    }

    const q = await open()
    const qData = path.join(q.dir, 'data')
    await seedWal(qData, 'shop', [[{ schema: V1, format: 'csv', lines: ['1,"a"', '2,"b"'] }]])
    const off = await session(q, { SKIPPR_QUERY_CACHE: 'off' })
    try {
      expect(await rows(off, 'SELECT sum(id) FROM shop.users')).toEqual([['3']])
    } finally {
      await off.close()
    }
    expect(existsSync(path.join(qData, 'query'))).toBe(false)
  })
})
