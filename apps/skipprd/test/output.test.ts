import { expect, it } from 'vitest'
import { jsonReporter, timestamp } from '../src/output/json.js'
import { textReporter } from '../src/output/text.js'
import { RunProgress, type SyncEvent } from '../src/runner/events.js'

const progress = new RunProgress()
const run: SyncEvent[] = [
  { type: 'start', pipeline: 'bikehire', runId: 'r1', progress, sink: 'warehouse' },
  { type: 'namespace_discovered', pipeline: 'bikehire', runId: 'r1', namespace: 'rentals', fieldCount: 9 },
  { type: 'phase', pipeline: 'bikehire', runId: 'r1', phase: 'Ingesting', state: 'start' },
  { type: 'phase', pipeline: 'bikehire', runId: 'r1', phase: 'Ingesting', state: 'done' },
  { type: 'phase', pipeline: 'bikehire', runId: 'r1', phase: 'Finalising', state: 'start' },
  { type: 'phase', pipeline: 'bikehire', runId: 'r1', phase: 'Finalising', state: 'done' },
  {
    type: 'complete',
    pipeline: 'bikehire',
    runId: 'r1',
    namespaces: 1,
    rowsWritten: 48213,
    deadletterRows: 0,
    discardedRows: 0,
    elapsedMs: 21874,
  },
]

it('prints the seed lines in text mode', () => {
  let out = ''
  const reporter = textReporter((text) => (out += text))
  for (const event of run) reporter.event(event)
  reporter.event({
    type: 'skipped',
    pipeline: 'p',
    reason: 'disabled',
    message: "Pipeline 'p' disabled, skipping.",
  })
  expect(out).toBe(
    [
      'Sync started: pipeline=bikehire',
      '[start] Ingesting',
      '[done]  Ingesting',
      '[start] Finalising',
      '[done]  Finalising',
      'Sync complete: pipeline=bikehire namespaces=1 rows=48213 elapsed=21874ms',
      "Pipeline 'p' disabled, skipping.",
      '',
    ].join('\n'),
  )
})

it('prints the seed events in json mode, with sync_status on an interval', async () => {
  let out = ''
  const now = () => new Date(Date.UTC(2026, 9, 9, 14, 2, 11, 204))
  const reporter = jsonReporter((text) => (out += text), { statusIntervalMs: 30, now })
  reporter.event(run[0]!)
  progress.read('rentals', 10, 1000)
  progress.written('rentals', 4)
  await new Promise((resolve) => setTimeout(resolve, 50))
  for (const event of run.slice(1)) reporter.event(event)
  reporter.event({
    type: 'error',
    pipeline: 'bikehire',
    runId: 'r1',
    error: 'boom',
    cause: new Error('boom'),
  })
  reporter.close()
  const lines = out
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
  expect(lines.map((l) => l.event)).toEqual([
    'sync_start',
    'sync_status',
    'namespace_discovered',
    'sync_complete',
    'sync_error',
  ])
  const ts = '2026-10-09T14:02:11.204000+00:00'
  expect(lines[0]).toEqual({
    event: 'sync_start',
    phase: 'start',
    pipeline: 'bikehire',
    timestamp: ts,
    run_id: 'r1',
  })
  expect(lines[1]).toMatchObject({
    event: 'sync_status',
    phase: 'ingesting',
    total_rows: 10,
    bytes: 1000,
    rows_written: 4,
    uploads_in_flight: 0,
  })
  expect(typeof lines[1].elapsed_ms).toBe('number')
  expect(lines[2]).toEqual({
    event: 'namespace_discovered',
    phase: 'discover',
    pipeline: 'bikehire',
    namespace: 'rentals',
    field_count: 9,
    timestamp: ts,
    run_id: 'r1',
  })
  expect(JSON.stringify(lines[3])).toBe(
    '{"event":"sync_complete","phase":"complete","pipeline":"bikehire","namespaces_synced":1,"total_rows":48213,"elapsed_ms":21874,"timestamp":"2026-10-09T14:02:11.204000+00:00","run_id":"r1"}',
  )
  expect(lines[4]).toEqual({
    event: 'sync_error',
    phase: 'error',
    pipeline: 'bikehire',
    error: 'boom',
    timestamp: ts,
    run_id: 'r1',
  })
})

it('formats timestamps like the vendor', () => {
  expect(timestamp(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)))).toBe('2026-01-02T03:04:05.006000+00:00')
})
