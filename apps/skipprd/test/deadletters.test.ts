/**
 * The runner's deadletter flow (lander.ts, deadletters.ts) with in-memory connectors over the
 * real WAL and state store: records the source set aside and rows the sink refuses land once in
 * the deadletter sink, the rest once in the data sink, across failures and reruns.
 */
import { rm } from 'node:fs/promises'
import {
  MemorySink,
  type RefusedRecord,
  recordRanges,
  refused,
  retryLater,
  type SinkBatch,
  type WriteOutcome,
} from '@skippr/connector-api'
import { openStateStore } from '@skippr/state'
import pino from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runPipeline } from '../src/runner/pipeline-run.js'
import { harness, itemChunks, landedIds, memorySource, tempDir } from './support/runner.js'

let dir: string
beforeEach(async () => {
  dir = await tempDir()
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** Refuses every row whose name ends in a 7 (`7,"item 7"`, `17,"item 17"`, …), as a destination would. */
class RefusingSink extends MemorySink {
  writes = 0
  override async write(batch: SinkBatch): Promise<WriteOutcome> {
    this.writes++
    const rows = batch.parts.flatMap((part, index) =>
      recordRanges(part.body, part.format)
        .map(([start, end], row) => ({ row, text: Buffer.from(part.body.subarray(start, end)).toString() }))
        .filter(({ text }) => text.endsWith('7"'))
        .map(({ row, text }) => ({ part: index, row, error: `name ${text} refused`, code: '22P02' })),
    )
    return rows.length > 0 ? refused(rows) : super.write(batch)
  }
}

interface LandedDeadletter {
  readonly id: string
  readonly namespace: string
  readonly record: string
  readonly error: string
  readonly failure_code: string
  readonly offset_key: string | null
  readonly offset_pos: number | null
}

function deadletters(sink: MemorySink): LandedDeadletter[] {
  return [...sink.batches.values()].flatMap((batch) =>
    batch.parts.flatMap((part) =>
      Buffer.from(part.body)
        .toString()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as LandedDeadletter),
    ),
  )
}

const refusedRecord = (line: number): RefusedRecord => ({
  namespace: 'items',
  record: `bad line ${line}`,
  error: `items.csv line ${line}: not UTF-8`,
  failureCode: 'SKIPPR_BAD_RECORD',
  sourceUri: 'items.csv',
  offsetKey: 'line',
  offsetPos: line,
})

describe('deadletters', () => {
  it('lands the rows a sink refuses in the deadletter sink and the rest once; a rerun lands nothing', async () => {
    const sink = new RefusingSink()
    const dl = new MemorySink()
    const h = harness(
      dir,
      () => memorySource(itemChunks(3, 10)),
      () => sink,
      () => dl,
    )
    const result = await runPipeline(h.options())
    expect(landedIds(sink)).toEqual([...Array(30).keys()].map((i) => i + 1).filter((id) => id % 10 !== 7))
    const set = deadletters(dl)
    expect(set.map((d) => d.record)).toEqual(['7,"item 7"', '17,"item 17"', '27,"item 27"'])
    expect(set[0]).toMatchObject({
      namespace: 'items',
      error: 'name 7,"item 7" refused',
      failure_code: '22P02',
    })
    expect(new Set(set.map((d) => d.id)).size).toBe(3)
    // Deadletters land under their own identity, apart from the batch's rows.
    expect([...dl.batches.values()].every((b) => b.id.pipeline === '_dl_items.refused')).toBe(true)
    expect(result).toMatchObject({ rowsWritten: 27, deadletterRows: 3, discardedRows: 0 })

    const writes = sink.writes
    await runPipeline(h.options())
    expect(sink.writes).toBe(writes)
    expect(deadletters(dl)).toHaveLength(3)
  })

  it('commits the records a source sets aside with the chunk and lands them with the batch', async () => {
    const chunks = itemChunks(2, 5).map((chunk, c) => ({ ...chunk, refused: [refusedRecord(c * 10 + 3)] }))
    const sink = new MemorySink()
    const dl = new MemorySink()
    const h = harness(
      dir,
      () => memorySource(chunks),
      () => sink,
      () => dl,
    )
    await runPipeline(h.options())
    expect(landedIds(sink)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    expect(deadletters(dl)).toEqual([
      expect.objectContaining({ record: 'bad line 3', offset_key: 'line', offset_pos: 3 }),
      expect.objectContaining({ record: 'bad line 13', failure_code: 'SKIPPR_BAD_RECORD' }),
    ])
    const store = await openStateStore({ dataDir: dir, workspace: 'default' })
    try {
      const counts = await store.pipeline('items').counters.read()
      expect(counts.get('items')).toMatchObject({ landedRows: 10, deadletterRows: 2 })
      expect(counts.get('_dl_items')).toMatchObject({ committedRows: 2 })
    } finally {
      await store.close()
    }
  })

  it('a batch with both kinds: each stage lands once under its own identity, numbered in its own order', async () => {
    const chunks = itemChunks(1, 10).map((chunk) => ({
      ...chunk,
      refused: [refusedRecord(3), refusedRecord(9)],
    }))
    const sink = new RefusingSink()
    const dl = new MemorySink()
    const h = harness(
      dir,
      () => memorySource(chunks),
      () => sink,
      () => dl,
    )
    await runPipeline(h.options())
    await runPipeline(h.options())
    expect([...dl.batches.values()].map((b) => b.id.pipeline).sort()).toEqual([
      '_dl_items',
      '_dl_items.refused',
    ])
    expect(deadletters(dl).map((d) => [d.id.split('/').slice(-2).join('/'), d.record])).toEqual(
      expect.arrayContaining([
        ['source/0', 'bad line 3'],
        ['source/1', 'bad line 9'],
        ['refused/0', '7,"item 7"'],
      ]),
    )
    expect(deadletters(dl)).toHaveLength(3)
    expect(landedIds(sink)).toEqual([1, 2, 3, 4, 5, 6, 8, 9, 10])
  })

  it('without a deadletter sink counts and logs the dropped rows, never silently', async () => {
    const lines: string[] = []
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) })
    const h = harness(
      dir,
      () => memorySource(itemChunks(2, 10)),
      () => new RefusingSink(),
    )
    const result = await runPipeline(h.options({ logger }))
    expect(result).toMatchObject({ rowsWritten: 18, deadletterRows: 2, discardedRows: 2 })
    expect(lines.join('')).toContain(
      'Discarded 1 deadletter records because no deadletter sink is configured',
    )
    expect(h.events.at(-1)).toMatchObject({ type: 'complete', deadletterRows: 2, discardedRows: 2 })
  })

  it('a crash between the deadletters and the rows: the next run lands each once', async () => {
    // The data sink fails every write after a refusal until the run gives up: the deadletters landed, the rows did not.
    class FailingAfterRefusal extends RefusingSink {
      failing = true
      override async write(batch: SinkBatch): Promise<WriteOutcome> {
        const outcome = await super.write(batch)
        if (outcome.status === 'landed' && this.failing) {
          this.batches.clear()
          return retryLater(new Error('connection lost'))
        }
        return outcome
      }
    }
    const sink = new FailingAfterRefusal()
    const dl = new MemorySink()
    const h = harness(
      dir,
      () => memorySource(itemChunks(1, 10)),
      () => sink,
      () => dl,
    )
    await expect(runPipeline(h.options({ retryBudgetMs: 300 }))).rejects.toThrow(/did not land|retry/i)
    expect(deadletters(dl)).toHaveLength(1)
    sink.failing = false
    await runPipeline(h.options())
    expect(landedIds(sink)).toEqual([1, 2, 3, 4, 5, 6, 8, 9, 10])
    expect(deadletters(dl).map((d) => d.record)).toEqual(['7,"item 7"'])
  })
})
