/**
 * The metrics connectors publish through `context.meter` (connector-api's Meter), on the sync's
 * registry: each read at scrape, with the pipeline as a label. A run's connector counts from 0, so
 * when the next run's connector takes a counter over, the last run's final values are kept and added
 * to it: the counter adds up every run of the process, as the sync's own do (sync-metrics.ts).
 */
import type { Meter, MeterRead, MeterSample } from '@skippr/connector-api'
import type { Registry } from 'prom-client'
import { type Sample, view } from './view.js'

type Kind = 'counter' | 'gauge'

interface PipelineReading {
  read: MeterRead
  /** A counter's totals from the pipeline's earlier runs, by label set. */
  earlier: Map<string, Sample>
}

/** One connector metric, across pipelines. */
class ConnectorMetric {
  private readonly pipelines = new Map<string, PipelineReading>()

  constructor(readonly kind: Kind) {}

  /** `read` is the metric of the pipeline's current run from now on. */
  attach(pipeline: string, read: MeterRead): void {
    const previous = this.pipelines.get(pipeline)
    const earlier =
      previous && this.kind === 'counter'
        ? added(previous.earlier, samplesOf(previous.read, pipeline))
        : new Map()
    this.pipelines.set(pipeline, { read, earlier })
  }

  samples(): Sample[] {
    return [...this.pipelines].flatMap(([pipeline, { read, earlier }]) => [
      ...added(earlier, samplesOf(read, pipeline)).values(),
    ])
  }
}

export class ConnectorMeters {
  private readonly metrics = new Map<string, ConnectorMetric>()

  constructor(private readonly registry: Registry) {}

  /** The meter of one pipeline's connectors. */
  meter(pipeline: string): Meter {
    return {
      counter: (name, help, read) => this.attach('counter', name, help, pipeline, read),
      gauge: (name, help, read) => this.attach('gauge', name, help, pipeline, read),
    }
  }

  private attach(kind: Kind, name: string, help: string, pipeline: string, read: MeterRead): void {
    let metric = this.metrics.get(name)
    if (metric === undefined) {
      const created = new ConnectorMetric(kind)
      this.registry.registerMetric(view(name, help, kind, () => created.samples()) as never)
      this.metrics.set(name, created)
      metric = created
    } else if (metric.kind !== kind) {
      throw new TypeError(`metric ${name} is a ${metric.kind}, not a ${kind}`)
    }
    metric.attach(pipeline, read)
  }
}

function samplesOf(read: MeterRead, pipeline: string): Sample[] {
  const now = read()
  const samples: readonly MeterSample[] = typeof now === 'number' ? [{ value: now }] : now
  return samples.map(({ value, labels }) => ({ value, labels: { ...labels, pipeline } }))
}

/** `earlier` with `now` added, by label set. */
function added(earlier: Map<string, Sample>, now: Sample[]): Map<string, Sample> {
  const sums = new Map(earlier)
  for (const sample of now) {
    const key = labelKey(sample)
    sums.set(key, { value: (sums.get(key)?.value ?? 0) + sample.value, labels: sample.labels })
  }
  return sums
}

function labelKey(sample: Sample): string {
  return JSON.stringify(Object.entries(sample.labels).sort(([a], [b]) => a.localeCompare(b)))
}
