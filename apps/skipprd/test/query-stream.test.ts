/**
 * STREAM (a live tail of committed WAL rows) and SHOW DOCS, through the built CLI's `query`, and the
 * statement docs that `sql-help` prints checked against the parsers.
 */
import path from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, describe, expect, it } from 'vitest'
import { STATEMENT_DOCS } from '../src/query/statement-docs.js'
import { describeAdmin, parseAdminStatement } from '../src/query/statements.js'
import { parseStreamStatement } from '../src/query/stream.js'
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

const ITEMS = schema('items', [
  { name: 'n', type: 'long' },
  { name: 'tag', type: 'string' },
])
const commitItems = (p: Project, ...ns: number[]) =>
  seedWal(path.join(p.dir, 'data'), 'shop', [
    [{ schema: ITEMS, format: 'jsonl', lines: ns.map((n) => JSON.stringify({ n, tag: `t${n}` })) }],
  ])

/** A `query --plain --sql <statement>` whose stdout lines are read one by one as JSON. */
function streaming(p: Project, statement: string) {
  const child = spawnCli(['query', '--plain', '--sql', statement], { cwd: p.dir })
  let stderr = ''
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  return {
    child,
    stderr: () => stderr,
    next: async () =>
      JSON.parse((await lines.next()).value as string) as { header: string[]; rows: string[][] },
  }
}

describe.concurrent('STREAM and SHOW DOCS in skipprd query', { timeout: 120_000 }, () => {
  it('STREAM prints the pending rows, then each batch committed after, filtered, until Ctrl-C', async () => {
    const p = await open()
    await commitItems(p, 1, 2)
    const stream = streaming(p, 'STREAM n, tag FROM shop.items WHERE n > 1')
    expect(await stream.next()).toEqual({ header: ['n', 'tag'], rows: [['2', 't2']] })
    await commitItems(p, 0, 3, 4)
    expect(await stream.next()).toEqual({
      header: ['n', 'tag'],
      rows: [
        ['3', 't3'],
        ['4', 't4'],
      ],
    })
    await commitItems(p, 5)
    expect((await stream.next()).rows).toEqual([['5', 't5']])
    stream.child.kill('SIGINT')
    expect(await exited(stream.child)).toEqual({ code: 0, signal: null })
    expect(stream.stderr()).toBe('')
  })

  it('STREAM … LIMIT n ends by itself once n rows are printed, the later ones from batches yet to come', async () => {
    const p = await open()
    await commitItems(p, 1, 2)
    const stream = streaming(p, 'STREAM * FROM shop.items LIMIT 3')
    expect((await stream.next()).rows).toEqual([
      ['1', 't1'],
      ['2', 't2'],
    ])
    await commitItems(p, 3, 4)
    expect((await stream.next()).rows).toEqual([['3', 't3']])
    expect(await exited(stream.child)).toEqual({ code: 0, signal: null })
  })

  it('STREAM of a namespace the pipeline lacks, or a column it lacks, is one line and exit 1', async () => {
    const p = await open()
    await commitItems(p, 1)
    const namespace = await runCli(['query', '--sql', 'STREAM * FROM shop.orders'], { cwd: p.dir })
    expect(namespace.code).toBe(1)
    expect(namespace.stderr).toContain(
      "Namespace 'orders' not found in pipeline 'shop': its namespaces: items",
    )
    const column = await runCli(['query', '--sql', 'STREAM price FROM shop.items'], { cwd: p.dir })
    expect(column.code).toBe(1)
    expect(column.stderr).toMatch(/^\[skippr\] query failed: .*price/)
  })

  it('SHOW DOCS lists every statement with its syntax and an example', async () => {
    const p = await open()
    const shown = await runCli(['query', '--plain', '--sql', 'show docs'], { cwd: p.dir })
    expect(shown.code, shown.stderr).toBe(0)
    const { header, rows } = JSON.parse(shown.stdout) as { header: string[]; rows: string[][] }
    expect(header).toEqual(['statement', 'syntax', 'summary', 'example'])
    expect(rows.map((row) => row[0])).toEqual(STATEMENT_DOCS.map((doc) => doc.command))
    expect(rows.map((row) => row[0])).toEqual(expect.arrayContaining(['STREAM', 'ALTER TABLE', 'SHOW DOCS']))
  })
})

describe('the statement docs', () => {
  it("each example is the statement it documents, as the prompt's parsers read it", () => {
    for (const doc of STATEMENT_DOCS) {
      const admin = parseAdminStatement(doc.example)
      const stream = parseStreamStatement(doc.example)
      if (doc.command === 'SELECT') expect(admin ?? stream, doc.example).toBeUndefined()
      else if (doc.command === 'STREAM') expect(stream?.namespace, doc.example).toBe('rentals')
      else if (doc.command === 'SHOW DOCS') expect(doc.example).toBe('SHOW DOCS')
      else expect(admin && describeAdmin(admin), doc.example).toMatch(new RegExp(`^${doc.command}\\b`))
    }
  })
})

describe.concurrent('skipprd sql-help', { timeout: 60_000 }, () => {
  it('prints every statement as Markdown by default, as JSON or HTML on request, or one statement', async () => {
    const p = await open()
    const md = await runCli(['sql-help'], { cwd: p.dir })
    expect(md.code).toBe(0)
    for (const doc of STATEMENT_DOCS) expect(md.stdout).toContain(`## ${doc.command}\n`)
    const json = await runCli(['sql-help', '--format', 'json'], { cwd: p.dir })
    expect(JSON.parse(json.stdout)).toEqual(STATEMENT_DOCS)
    const html = await runCli(['sql-help', '--format', 'html', '--command', 'alter table'], { cwd: p.dir })
    expect(html.stdout).toMatch(/^<dl>\n {2}<dt id="alter-table"><code>ALTER TABLE &lt;pipeline&gt;/)
    expect(html.stdout).not.toContain('STREAM')
    const one = await runCli(['sql-help', '--command', 'Show   Pipeline'], { cwd: p.dir })
    expect(one.stdout.match(/^## /gm)).toEqual(['## '])
    expect(one.stdout).toContain('## SHOW PIPELINE\n')
  })

  it('refuses a statement it does not know, or a format, as bad command lines', async () => {
    const p = await open()
    const unknown = await runCli(['sql-help', '--command', 'UPSERT'], { cwd: p.dir })
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toBe(
      `[skippr] sql-help: no statement 'UPSERT': the statements are ${STATEMENT_DOCS.map((d) => d.command).join(', ')}\n`,
    )
    const format = await runCli(['sql-help', '--format', 'pdf'], { cwd: p.dir })
    expect(format.code).toBe(2)
    expect(format.stdout).toBe('')
  })
})
