/**
 * A log that cannot be written never ends the run it describes: the log file on a full disk (here
 * `/dev/full`, which answers every write with ENOSPC) stops with one line on stderr, and the
 * process goes on and exits as it would have.
 */
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterEach, expect, it } from 'vitest'

const run = promisify(execFile)
const dist = (file: string) => fileURLToPath(new URL(`../dist/${file}`, import.meta.url))
let dir: string

afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

it('logging on a full disk stops with one line on stderr, and the process goes on', async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'skippr-log-'))
  const now = new Date(2026, 11, 1)
  await mkdir(path.join(dir, 'logs'))
  await symlink('/dev/full', path.join(dir, 'logs', 'skipprd.2026-12-01.log'))
  const script = `
    const { createLogger } = await import(${JSON.stringify(dist('logging.js'))})
    const { Redactor } = await import(${JSON.stringify(dist('redact.js'))})
    const logger = createLogger({ dir: ${JSON.stringify(dir)}, redactor: new Redactor(), now: new Date(${now.getTime()}) })
    for (let i = 0; i < 3; i++) logger.info({ i }, 'a line the disk has no room for')
    console.log('still running')
  `
  const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script])
  expect(stdout).toBe('still running\n')
  expect(stderr.trim().split('\n')).toEqual([
    `skipprd: cannot write the log file ${path.join(dir, 'logs', 'skipprd.2026-12-01.log')} (ENOSPC): ` +
      `logging to it stops; free space or fix permissions in ${path.join(dir, 'logs')}`,
  ])
})
