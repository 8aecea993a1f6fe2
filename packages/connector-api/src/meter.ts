/**
 * Metrics a connector may publish through its context (`context.meter`): counters and gauges read at
 * each scrape from numbers the connector keeps, so a connector needs no metrics library. The runner
 * serves them (skipprd's `/metrics`) with the pipeline as a label, and adds up a counter across the
 * runs of a pipeline: each run's connector counts from 0.
 */

/** Label values must be bounded (an HTTP status, an error category), never an id or a path. */
export type MeterLabels = Readonly<Record<string, string>>

export interface MeterSample {
  readonly value: number
  readonly labels?: MeterLabels
}

/** What a metric reads at each scrape: one value, or one sample per label set. */
export type MeterRead = () => number | readonly MeterSample[]

export interface Meter {
  /** A count that only rises, named `…_total`. */
  counter(name: string, help: string, read: MeterRead): void
  /** A value now (connected clients, bytes waiting). */
  gauge(name: string, help: string, read: MeterRead): void
}
