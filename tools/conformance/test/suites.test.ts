/**
 * The suites must be able to fail: each defect in the reference sink is run through the
 * exactly-once suite in a child vitest, and exactly the cases that cover it must fail.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import type { Defect } from './reference-sink.js'

const run = promisify(execFile)
const config = path.join(import.meta.dirname, 'fixtures', 'vitest.config.ts')

interface Report {
  testResults: { assertionResults: { title: string; status: string }[] }[]
}

async function failingCases(defect: Defect): Promise<string[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'skippr-conformance-'))
  const out = path.join(dir, 'report.json')
  try {
    await run(
      process.execPath,
      [vitestBin(), 'run', '--config', config, '--reporter=json', `--outputFile=${out}`],
      { env: { ...process.env, SKIPPR_CONFORMANCE_DEFECT: defect } },
    ).catch(() => undefined)
    const report = JSON.parse(await readFile(out, 'utf8')) as Report
    return report.testResults
      .flatMap((file) => file.assertionResults)
      .filter((test) => test.status !== 'passed')
      .map((test) => test.title)
      .sort()
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

function vitestBin(): string {
  return path.join(import.meta.dirname, '..', 'node_modules', 'vitest', 'vitest.mjs')
}

describe('the exactly-once suite catches broken sinks', () => {
  it('passes the reference sink', async () => {
    expect(await failingCases('none')).toEqual([])
  })

  it('a sink that forgets identities fails the duplicate cases', async () => {
    expect(await failingCases('forgets-identities')).toEqual([
      'crash between write and ack: a fresh sink writing the same identity again leaves the rows once',
      'same batch twice: the rows land once',
    ])
  })

  it('a sink that lands parts one by one fails the rejection case', async () => {
    expect(await failingCases('not-atomic')).toEqual([
      'a batch the destination rejects: fatal or retry, an error naming the table, nothing half-written',
    ])
  })

  it('a sink that ignores the fence fails the fencing case', async () => {
    expect(await failingCases('ignores-fence')).toEqual([
      'fencing: a lower fence token is refused with fatal after a higher one landed, also after a restart',
    ])
  })
})
