import { readFile, rm } from 'node:fs/promises'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { connectorLogger, createLogger, logFilePath } from '../src/logging.js'
import { Redactor } from '../src/redact.js'
import { tempDir } from './support/runner.js'

let dir: string
beforeEach(async () => {
  dir = await tempDir()
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

it('masks registered secrets, their JSON-escaped form and passwords in URLs', () => {
  const redactor = new Redactor()
  redactor.add(['s3cr"et\\pass', 'postgres://app:p%40ss@db:5432/x'])
  expect(redactor.redact('token s3cr"et\\pass used')).toBe('token *** used')
  expect(redactor.redact(JSON.stringify({ v: 's3cr"et\\pass' }))).toBe('{"v":"***"}')
  expect(redactor.redact('connecting to postgres://app:p%40ss@db:5432/x')).toBe(
    'connecting to postgres://app:***@db:5432/x',
  )
  // The decoded password is a secret too, wherever it appears.
  expect(redactor.redact('auth failed for p@ss')).toBe('auth failed for ***')
  // Passwords in URLs are masked even when nobody registered them.
  expect(redactor.redact('mysql://root:letmein@host/db')).toBe('mysql://root:***@host/db')
})

it('ignores values too short to be told apart from ordinary text', () => {
  const redactor = new Redactor()
  redactor.add(['a', 'id'])
  expect(redactor.redact('a valid id')).toBe('a valid id')
})

it('writes logs to logs/skipprd.<date>.log with secrets masked', async () => {
  const redactor = new Redactor()
  const now = new Date(2026, 9, 9)
  const logger = createLogger({ dir, redactor, now })
  redactor.add(['hunter2-password'])
  connectorLogger(logger).info('connected', {
    password: 'hunter2-password',
    url: 'postgres://u:hunter3@h/db',
  })
  logger.error({ err: new Error('login failed with hunter2-password') }, 'sync failed')
  const file = logFilePath(dir, now)
  expect(file.endsWith('logs/skipprd.2026-10-09.log')).toBe(true)
  const text = await readFile(file, 'utf8')
  const lines = text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
  expect(lines.map((l) => l.msg)).toEqual(['connected', 'sync failed'])
  expect(lines[0]).toMatchObject({ level: 30, password: '***', url: 'postgres://u:***@h/db' })
  expect(text).not.toContain('hunter2')
  expect(text).not.toContain('hunter3')
})
