/** `skipprd query --sql … --watch <seconds>`: the built CLI re-running its statements over fresh WAL data. */
import path from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, describe, expect, it } from 'vitest'
import { exited, runCli, spawnCli } from './support/cli.js'
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

const ITEMS = schema('items', [{ name: 'n', type: 'long' }])
const commitItems = (p: Project, ...lines: string[]) =>
  seedWal(path.join(p.dir, 'data'), 'shop', [[{ schema: ITEMS, format: 'jsonl', lines }]])

describe.concurrent('skipprd query --watch', { timeout: 120_000 }, () => {
  it('runs the statements again each interval over what was committed since, until SIGINT, then exits 0', async () => {
    const p = await open()
    await commitItems(p, '{"n":1}', '{"n":2}')
    const query = spawnCli(
      ['query', '--plain', '--sql', 'SELECT count(*) AS rows FROM shop.items', '--watch', '0.2'],
      {
        cwd: p.dir,
      },
    )
    let stderr = ''
    query.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
    const lines = createInterface({ input: query.stdout! })[Symbol.asyncIterator]()
    const counts: number[] = []
    const nextCount = async (): Promise<number> => {
      const { value } = await lines.next()
      const count = Number((JSON.parse(value as string) as { rows: string[][] }).rows[0]![0])
      counts.push(count)
      return count
    }
    // Two rounds before the next commit: a round repeats, it does not end the command.
    expect(await nextCount()).toBe(2)
    expect(await nextCount()).toBe(2)
    await commitItems(p, '{"n":3}')
    while ((await nextCount()) === 2) {}
    expect(counts.at(-1)).toBe(3)
    query.kill('SIGINT')
    expect(await exited(query)).toEqual({ code: 0, signal: null })
    expect(stderr).toBe('')
  })

  it('refuses --watch without --sql, and an interval that is not seconds above 0, as bad command lines', async () => {
    const p = await open()
    const noSql = await runCli(['query', '--watch', '1'], { cwd: p.dir })
    expect(noSql.code).toBe(2)
    expect(noSql.stderr).toMatch(/^error: option '--watch <SECONDS>' needs --sql.*\n$/)
    for (const interval of ['0', '-1', 'soon', '']) {
      const bad = await runCli(['query', '--sql', 'SELECT 1', '--watch', interval], { cwd: p.dir })
      expect(bad.code, interval).toBe(2)
      expect(bad.stderr, interval).toContain('takes seconds, a number above 0')
      expect(bad.stdout, interval).toBe('')
    }
  })
})
