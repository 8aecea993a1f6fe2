/**
 * The interactive `sql>` prompt in a real pseudo-terminal (`script` allocates one): typed keys in,
 * screen bytes out, as a user sees it.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CLI, cliEnv, exited } from './support/cli.js'
import { type Project, project } from './support/project.js'
import { schema, seedWal, walOnlyConfig } from './support/query-fixtures.js'

const made: Project[] = []
afterAll(async () => {
  for (const p of made) await p.remove()
})

const ENTER = '\r'
const UP = '\x1b[A'
const CTRL_C = '\x03'
const CTRL_D = '\x04'

/** A `skipprd query` session on a pseudo-terminal. */
class Terminal {
  private screen = ''
  private seen = 0
  readonly child: ChildProcess

  constructor(p: Project, historyFile: string) {
    this.child = spawn('script', ['-qfec', `${process.execPath} ${CLI} query`, '/dev/null'], {
      cwd: p.dir,
      env: cliEnv({ SKIPPR_HISTORY_FILE: historyFile, TERM: 'xterm' }),
      stdio: 'pipe',
    })
    this.child.stdout?.on('data', (d: Buffer) => (this.screen += d.toString()))
  }

  /** Waits for `text` to appear after what earlier waits consumed; returns the output up to it. */
  async waitFor(text: string): Promise<string> {
    const deadline = Date.now() + 60_000
    for (;;) {
      const at = this.screen.indexOf(text, this.seen)
      if (at !== -1) {
        const out = this.screen.slice(this.seen, at + text.length)
        this.seen = at + text.length
        return out
      }
      if (Date.now() > deadline || this.child.exitCode !== null) {
        throw new Error(
          `no ${JSON.stringify(text)} on the terminal; it shows:\n${this.screen.slice(this.seen)}`,
        )
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  type(keys: string): void {
    this.child.stdin?.write(keys)
  }
}

describe('the sql> prompt', () => {
  it('runs multi-line statements, survives errors and Ctrl-C, keeps history, and quits with :q or Ctrl-D', async () => {
    const p = await project(walOnlyConfig(['shop']))
    made.push(p)
    await seedWal(path.join(p.dir, 'data'), 'shop', [
      [{ schema: schema('items', [{ name: 'n', type: 'int' }]), format: 'csv', lines: ['1', '2', '3'] }],
    ])
    const historyFile = path.join(p.dir, 'history')

    const first = new Terminal(p, historyFile)
    await first.waitFor('sql> ')
    first.type(`SELECT count(*) AS n${ENTER}`)
    await first.waitFor('...> ')
    first.type(`  FROM shop.items;${ENTER}`)
    expect(await first.waitFor('(1 row)')).toMatch(/n\r?\n-\r?\n3\r?\n\(1 row\)$/)
    await first.waitFor('sql> ')

    first.type(`SHOW PIPELINE nope;${ENTER}`)
    expect(await first.waitFor('sql> ')).toContain("Error: Pipeline 'nope' not found in skippr.yml")

    // Ctrl-C drops the statement being typed.
    first.type(`SELECT 'dropped'${ENTER}`)
    await first.waitFor('...> ')
    first.type(CTRL_C)
    await first.waitFor('sql> ')
    first.type(`SELECT 2 AS two; SELECT 'x' AS y;${ENTER}`)
    const both = await first.waitFor('sql> ')
    expect(both).not.toContain('dropped')
    expect(both).toMatch(/two\r?\n---\r?\n {2}2\r?\n\(1 row\)\r?\ny\r?\n-\r?\nx\r?\n\(1 row\)/)
    first.type(`:q${ENTER}`)
    expect(await exited(first.child)).toEqual({ code: 0, signal: null })

    expect((await readFile(historyFile, 'utf8')).split('\n')).toEqual([
      'SELECT count(*) AS n',
      '  FROM shop.items;',
      'SHOW PIPELINE nope;',
      "SELECT 'dropped'",
      "SELECT 2 AS two; SELECT 'x' AS y;",
      '',
    ])

    // A new session recalls the last line with the up arrow.
    const second = new Terminal(p, historyFile)
    await second.waitFor('sql> ')
    second.type(`${UP}${ENTER}`)
    const recalled = await second.waitFor('x\r\n(1 row)')
    expect(recalled).toContain("SELECT 2 AS two; SELECT 'x' AS y;")
    expect(recalled).toMatch(/y\r?\n-\r?\nx\r?\n\(1 row\)$/)
    await second.waitFor('sql> ')
    second.type(CTRL_D)
    expect(await exited(second.child)).toEqual({ code: 0, signal: null })
  }, 120_000)
})
