/**
 * The suites must be able to fail: each defect in the reference sink is run through the suite of
 * its tier in a child vitest, and exactly the cases that cover it must fail.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import type { Defect, ReferenceTier } from './reference-sink.js'

const run = promisify(execFile)
const config = path.join(import.meta.dirname, 'fixtures', 'vitest.config.ts')

interface Report {
  testResults: { assertionResults: { title: string; status: string }[] }[]
}

async function failingCases(defect: Defect, tier: ReferenceTier = 'exactly-once'): Promise<string[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'skippr-conformance-'))
  const out = path.join(dir, 'report.json')
  try {
    await run(
      process.execPath,
      [vitestBin(), 'run', '--config', config, '--reporter=json', `--outputFile=${out}`],
      { env: { ...process.env, SKIPPR_CONFORMANCE_DEFECT: defect, SKIPPR_CONFORMANCE_TIER: tier } },
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

// Each case runs a whole suite (about 20 s here, more under CI's load).
describe('the exactly-once suite catches broken sinks', { timeout: 120_000 }, () => {
  it('passes the reference sink', async () => {
    expect(await failingCases('none')).toEqual([])
  })

  it('a sink that forgets identities fails the duplicate cases', async () => {
    expect(await failingCases('forgets-identities')).toEqual([
      'crash between write and ack: a fresh sink writing the same identity again leaves the rows once',
      'same batch twice: the rows land once',
    ])
  })

  it('a sink that lands parts one by one fails the refusal and row count cases', async () => {
    expect(await failingCases('not-atomic')).toEqual([
      'a part holding another number of records than it declares: fatal, nothing of the batch lands',
      'rows the destination refuses: refused, naming every one, nothing written; the rest lands under the same identity',
    ])
  })

  it('a sink that names only the first refused row fails the refusal case', async () => {
    expect(await failingCases('names-first-refusal-only')).toEqual([
      'rows the destination refuses: refused, naming every one, nothing written; the rest lands under the same identity',
    ])
  })

  it('a sink that lands what a body holds, whatever its parts declare, fails the row count case', async () => {
    expect(await failingCases('ignores-row-count')).toEqual([
      'a part holding another number of records than it declares: fatal, nothing of the batch lands',
    ])
  })

  it('a sink that ignores the fence fails the fencing case', async () => {
    expect(await failingCases('ignores-fence')).toEqual([
      'fencing: a lower fence token is refused with fatal after a higher one landed, also after a restart',
    ])
  })
})

describe('the at-least-once suite catches broken sinks', { timeout: 120_000 }, () => {
  const repeats = [
    'crash between write and ack: a fresh sink writing the same identity adds only whole tagged copies',
    'same batch twice: each part lands at least once, only whole copies, each row tagged with its part key',
  ]
  const reset = "reset: a new epoch's identical seq lands as new rows under keys of its own"

  it('passes the reference sink', async () => {
    expect(await failingCases('none', 'at-least-once')).toEqual([])
  })

  it('a sink that does not tag rows with their part key fails the tagging cases', async () => {
    expect(await failingCases('untagged', 'at-least-once')).toEqual([...repeats, reset].sort())
  })

  it('a sink whose key changes between retries fails the repeat cases', async () => {
    expect(await failingCases('key-per-write', 'at-least-once')).toEqual([...repeats, reset].sort())
  })

  it('a sink whose retry lands part of a part fails the repeat cases', async () => {
    expect(await failingCases('repeat-drops-a-row', 'at-least-once')).toEqual(repeats)
  })
})
