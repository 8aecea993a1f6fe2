/** `skipprd df`, the built CLI over WAL data written through @skippr/wal. */
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './support/cli.js'
import { type Project, project } from './support/project.js'
import { schema, seedWal, walOnlyConfig } from './support/query-fixtures.js'

let p: Project
beforeAll(async () => {
  p = await project(walOnlyConfig(['shop', 'events', 'empty']))
  const data = path.join(p.dir, 'data')
  const orders = schema('orders', [
    { name: 'id', type: 'long' },
    { name: 'item', type: 'string' },
  ])
  const refunds = schema('refunds', [{ name: 'id', type: 'long' }])
  await seedWal(data, 'shop', [
    [{ schema: orders, format: 'csv', lines: ['1,"bike"', '2,'] }],
    [
      { schema: refunds, format: 'csv', lines: ['1'] },
      { schema: orders, format: 'jsonl', lines: ['{"id":3,"item":"lock \\"x\\""}'] },
    ],
  ])
  const clicks = schema('clicks', [
    { name: 'at', type: 'timestamp' },
    { name: 'page', type: 'string' },
  ])
  const views = schema('views', clicks.fields)
  await seedWal(data, 'events', [
    [{ schema: clicks, format: 'csv', lines: ['2024-05-01T10:00:00Z,"/a"'] }],
    [{ schema: views, format: 'jsonl', lines: ['{"at":"2024-05-01T11:00:00Z","page":"/b"}'] }],
  ])
}, 60_000)
afterAll(() => p.remove())

const df = (args: string[]) => runCli(['df', ...args], { cwd: p.dir })

describe.concurrent('skipprd df', { timeout: 120_000 }, () => {
  it('prints one namespace as {"header":[...],"rows":[[...]]}, every value a string', async () => {
    const result = await df(['-p', 'shop', '--namespace', 'orders'])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(
      '{"header":["id","item"],"rows":[["1","bike"],["2","NULL"],["3","lock \\"x\\""]]}\n',
    )
  })

  it('prints every namespace one after the other when their columns are the same', async () => {
    const result = await df(['--pipeline', 'events'])
    expect(result.stdout).toBe(
      '{"header":["at","page"],"rows":[["2024-05-01 10:00:00+00","/a"],["2024-05-01 11:00:00+00","/b"]]}\n',
    )
  })

  it('refuses to combine namespaces whose columns differ, naming them', async () => {
    const result = await df(['-p', 'shop'])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toBe(
      "[skippr] df failed: pipeline 'shop' has namespaces with different columns: orders (id long, item string); " +
        'refunds (id long). Pick one with --namespace <name>\n',
    )
  })

  it('explains an unknown namespace or pipeline, a missing -p, and prints nothing for a pipeline without data', async () => {
    const [unknownNs, unknownPipeline, missing, empty] = await Promise.all([
      df(['-p', 'shop', '--namespace', 'order']),
      df(['-p', 'shops']),
      df([]),
      df(['-p', 'empty']),
    ])
    expect(unknownNs.code).toBe(1)
    expect(unknownNs.stderr).toBe(
      "[skippr] df failed: Namespace 'order' not found in pipeline 'shop': its namespaces: orders, refunds\n",
    )
    expect(unknownPipeline.code).toBe(1)
    expect(unknownPipeline.stderr).toContain("Pipeline 'shops' not found in skippr.yml")
    expect(missing.code).toBe(2)
    expect(missing.stderr).toBe('[skippr] df needs a pipeline: pass -p <pipeline> (or set PIPELINE_NAME)\n')
    expect(empty).toMatchObject({ code: 0, stdout: '{"header":[],"rows":[]}\n' })
  })
})
