/**
 * The metrics of a sync process, read at each scrape from the same counters the sync_status
 * events and the terminal display show (RunProgress, runner/events.ts), so they agree. Counters
 * add up every run of the process; a pipeline's finished runs are folded into its tally.
 *
 * Names: skippr_<subsystem>_<what>_<unit>[_total]. Labels: pipeline, and where they are bounded,
 * namespace (the pipeline's schemas), sink (its data_sinks entry) and outcome.
 */
import type { Meter } from '@skippr/connector-api'
import { collectDefaultMetrics, Registry } from 'prom-client'
import {
  type RunProgress,
  type SyncEvent,
  WRITE_SECONDS_BUCKETS,
  type WriteAnswer,
  WriteStats,
} from '../runner/events.js'
import { ConnectorMeters } from './connector-meters.js'
import { view } from './view.js'

/** Per namespace sums of what runs counted. */
class NamespaceSums {
  readonly values = new Map<string, number>()
  add(namespace: string, value: number): void {
    this.values.set(namespace, (this.values.get(namespace) ?? 0) + value)
  }
}

/** What the finished runs of one pipeline in this process added up to. */
class Tally {
  readonly rowsRead = new NamespaceSums()
  readonly bytesRead = new NamespaceSums()
  readonly rowsCommitted = new NamespaceSums()
  readonly bytesCommitted = new NamespaceSums()
  readonly rowsLanded = new NamespaceSums()
  readonly deadletterRows = new NamespaceSums()
  readonly writes = new WriteStats()
  fenceRefusals = 0
  backpressureStalls = 0

  merge(other: Tally): void {
    const sums = (mine: NamespaceSums, theirs: NamespaceSums) => {
      for (const [namespace, value] of theirs.values) mine.add(namespace, value)
    }
    sums(this.rowsRead, other.rowsRead)
    sums(this.bytesRead, other.bytesRead)
    sums(this.rowsCommitted, other.rowsCommitted)
    sums(this.bytesCommitted, other.bytesCommitted)
    sums(this.rowsLanded, other.rowsLanded)
    sums(this.deadletterRows, other.deadletterRows)
    this.addWrites(other.writes)
    this.fenceRefusals += other.fenceRefusals
    this.backpressureStalls += other.backpressureStalls
  }

  add(run: RunProgress): void {
    for (const [namespace, c] of run.namespaces) {
      this.rowsRead.add(namespace, c.rowsRead)
      this.bytesRead.add(namespace, c.bytesRead)
      this.rowsLanded.add(namespace, c.rowsWritten)
      this.deadletterRows.add(namespace, c.deadletterRows)
    }
    for (const [namespace, c] of run.committed) {
      this.rowsCommitted.add(namespace, c.rows)
      this.bytesCommitted.add(namespace, c.bytes)
    }
    this.addWrites(run.writes)
    this.fenceRefusals += run.fenceRefusals
    this.backpressureStalls += run.backpressureStalls
  }

  private addWrites(writes: WriteStats): void {
    for (const [answer, count] of writes.answers)
      this.writes.answers.set(answer, (this.writes.answers.get(answer) ?? 0) + count)
    writes.buckets.forEach((count, i) => {
      this.writes.buckets[i] = (this.writes.buckets[i] as number) + count
    })
    this.writes.seconds += writes.seconds
    this.writes.count += writes.count
  }
}

interface PipelineView {
  readonly sink: string
  readonly done: Tally
  current: RunProgress | undefined
  takeovers: number
  readonly runs: Map<string, number>
}

export class SyncMetrics {
  readonly registry = new Registry()
  private readonly pipelines = new Map<string, PipelineView>()
  private readonly connectors = new ConnectorMeters(this.registry)

  constructor() {
    // The event-loop delay monitor samples every 100 ms, not every 10 ms: a sync keeps its event loop busy.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 100 })
    for (const metric of this.views()) this.registry.registerMetric(metric as never)
  }

  /** Feed it every event of the sync (a SyncListener). */
  observe(event: SyncEvent): void {
    if (event.type === 'start') {
      const view = this.pipeline(event.pipeline, event.sink)
      view.current = event.progress
      return
    }
    if (event.type === 'complete' || event.type === 'error' || event.type === 'skipped') {
      const view = this.pipeline(event.pipeline)
      const outcome = event.type === 'complete' ? 'completed' : event.type === 'error' ? 'failed' : 'skipped'
      view.runs.set(outcome, (view.runs.get(outcome) ?? 0) + 1)
      if (event.type === 'skipped' || view.current === undefined) return
      view.done.add(view.current)
      if (view.current.lease?.takeover) view.takeovers += 1
      view.current = undefined
    }
  }

  /** Where the connectors of a pipeline publish their own metrics (connector-meters.ts). */
  meter(pipeline: string): Meter {
    return this.connectors.meter(pipeline)
  }

  /** What the server answers on /healthz: every pipeline's phase, `idle` between runs. */
  health(): Record<string, string> {
    return Object.fromEntries(
      [...this.pipelines].map(([name, view]) => [name, view.current?.phase.toLowerCase() ?? 'idle']),
    )
  }

  private pipeline(name: string, sink?: string): PipelineView {
    let view = this.pipelines.get(name)
    if (view === undefined) {
      view = { sink: sink ?? '', done: new Tally(), current: undefined, takeovers: 0, runs: new Map() }
      this.pipelines.set(name, view)
    }
    return view
  }

  /** Each pipeline's finished tally with its current run added, as one Tally. */
  private tallies(): [string, PipelineView, Tally][] {
    return [...this.pipelines].map(([name, view]) => {
      const sum = new Tally()
      sum.merge(view.done)
      if (view.current) sum.add(view.current)
      return [name, view, sum]
    })
  }

  private views() {
    const byNamespace =
      (pick: (t: Tally) => NamespaceSums, withSink = false) =>
      () =>
        this.tallies().flatMap(([pipeline, view, tally]) =>
          [...pick(tally).values].map(([namespace, value]) => ({
            value,
            labels: { pipeline, namespace, ...(withSink && { sink: view.sink }) },
          })),
        )
    const perPipeline = (pick: (view: PipelineView, tally: Tally) => number | undefined) => () =>
      this.tallies().flatMap(([pipeline, view, tally]) => {
        const value = pick(view, tally)
        return value === undefined ? [] : [{ value, labels: { pipeline } }]
      })
    const pending = (view: PipelineView) => [...(view.current?.pending.values() ?? [])]
    return [
      view(
        'skippr_source_rows_read_total',
        'Rows read from the source.',
        'counter',
        byNamespace((t) => t.rowsRead),
      ),
      view(
        'skippr_source_bytes_read_total',
        'Bytes read from the source.',
        'counter',
        byNamespace((t) => t.bytesRead),
      ),
      view(
        'skippr_source_backpressure_stalls_total',
        'Times reading waited for landed batches to free room in the WAL (WAL_MAX_TOTAL_BYTES).',
        'counter',
        perPipeline((_, t) => t.backpressureStalls),
      ),
      view(
        'skippr_wal_rows_committed_total',
        'Rows committed to the WAL.',
        'counter',
        byNamespace((t) => t.rowsCommitted),
      ),
      view(
        'skippr_wal_bytes_committed_total',
        'Bytes committed to the WAL.',
        'counter',
        byNamespace((t) => t.bytesCommitted),
      ),
      view(
        'skippr_wal_pending_batches',
        'Batches in the WAL not landed yet, as this process has committed or met them.',
        'gauge',
        perPipeline((v) => pending(v).length),
      ),
      view(
        'skippr_wal_pending_bytes',
        'Bytes of those batches.',
        'gauge',
        perPipeline((v) => pending(v).reduce((s, b) => s + b.bytes, 0)),
      ),
      view(
        'skippr_wal_oldest_pending_age_seconds',
        'Age of the oldest of those batches (0 when none).',
        'gauge',
        perPipeline((v) => {
          const oldest = Math.min(...pending(v).map((b) => b.since))
          return Number.isFinite(oldest) ? (Date.now() - oldest) / 1000 : 0
        }),
      ),
      view(
        'skippr_sink_rows_landed_total',
        'Rows landed in the destination.',
        'counter',
        byNamespace((t) => t.rowsLanded, true),
      ),
      view(
        'skippr_sink_deadletter_rows_total',
        'Rows set aside as deadletters.',
        'counter',
        byNamespace((t) => t.deadletterRows),
      ),
      view('skippr_sink_writes_total', 'Write attempts by how the destination answered.', 'counter', () =>
        this.tallies().flatMap(([pipeline, view, tally]) =>
          [...tally.writes.answers].map(([outcome, value]: [WriteAnswer, number]) => ({
            value,
            labels: { pipeline, sink: view.sink, outcome },
          })),
        ),
      ),
      view('skippr_sink_write_duration_seconds', 'Duration of write attempts.', 'histogram', () =>
        this.tallies().flatMap(([pipeline, view, tally]) => {
          const labels = { pipeline, sink: view.sink }
          return [
            ...tally.writes.buckets.map((value, i) => ({
              value,
              labels: { ...labels, le: String(WRITE_SECONDS_BUCKETS[i] ?? '+Inf') },
              metricName: 'skippr_sink_write_duration_seconds_bucket',
            })),
            { value: tally.writes.seconds, labels, metricName: 'skippr_sink_write_duration_seconds_sum' },
            { value: tally.writes.count, labels, metricName: 'skippr_sink_write_duration_seconds_count' },
          ]
        }),
      ),
      view(
        'skippr_sink_fence_refusals_total',
        'Writes the destination refused for a stale fencing token.',
        'counter',
        perPipeline((_, t) => t.fenceRefusals),
      ),
      view(
        'skippr_lease_held',
        '1 while this process holds the pipeline writer lease.',
        'gauge',
        perPipeline((v) => (v.current?.lease ? 1 : 0)),
      ),
      view(
        'skippr_lease_token',
        'Fencing token of the lease this process holds.',
        'gauge',
        perPipeline((v) => (v.current?.lease ? Number(v.current.lease.token) : undefined)),
      ),
      view(
        'skippr_lease_takeovers_total',
        'Leases this process took from a holder that had not released them.',
        'counter',
        perPipeline((v) => v.takeovers + (v.current?.lease?.takeover ? 1 : 0)),
      ),
      view('skippr_sync_runs_total', 'Runs of the pipeline by how they ended.', 'counter', () =>
        [...this.pipelines].flatMap(([pipeline, v]) =>
          [...v.runs].map(([outcome, value]) => ({ value, labels: { pipeline, outcome } })),
        ),
      ),
    ]
  }
}
