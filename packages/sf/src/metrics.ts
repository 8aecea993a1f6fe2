/**
 * The sender's counters as Prometheus metrics, computed at each scrape from the live counters (so they
 * agree with `sender.counters()`). Each is an object of the shape prom-client's
 * `Registry.registerMetric` takes (name, help, type, aggregator, get): this package needs no
 * prom-client. Gauges for what holds now, `_total` counters for what adds up since the sender started.
 */
import type { Sender } from './sender.js'
import type { SenderCounters } from './sender-counters.js'

export type MetricLabels = Readonly<Record<string, string>>

/** One metric as a prom-client registry serialises it. */
export interface MetricView {
  readonly name: string
  readonly help: string
  readonly type: 'counter' | 'gauge'
  readonly aggregator: 'sum'
  get(): Promise<{
    name: string
    help: string
    type: 'counter' | 'gauge'
    aggregator: 'sum'
    values: { value: number; labels: MetricLabels }[]
  }>
}

type Pick = (counters: SenderCounters, sender: Sender) => number

const METRICS: readonly [name: string, type: MetricView['type'], help: string, pick: Pick][] = [
  [
    'skippr_sf_sender_reconnect_attempts_total',
    'counter',
    'Wire outages begun: the connection broke (or could not be made) and retrying started.',
    (c) => c.totalReconnectAttempts,
  ],
  [
    'skippr_sf_sender_reconnects_succeeded_total',
    'counter',
    'Outages that ended with a new connection (attempts minus succeeded is 1 while the wire is down).',
    (c) => c.totalReconnectsSucceeded,
  ],
  [
    'skippr_sf_sender_frames_replayed_total',
    'counter',
    'Frames sent again because an earlier connection sent them and they were not acknowledged.',
    (c) => c.totalFramesReplayed,
  ],
  [
    'skippr_sf_sender_server_errors_total',
    'counter',
    'Error frames (HALT and DROP) received from the receiver.',
    (c) => c.totalServerErrors,
  ],
  [
    'skippr_sf_sender_error_notifications_delivered_total',
    'counter',
    'Error notifications handed to the error handler.',
    (c) => c.totalErrorNotificationsDelivered,
  ],
  [
    'skippr_sf_sender_error_notifications_dropped_total',
    'counter',
    'Error notifications not delivered: the inbox was full (or they were still queued at close).',
    (c) => c.droppedErrorNotifications,
  ],
  [
    'skippr_sf_sender_backpressure_stalls_total',
    'counter',
    'send/sendBlocking calls that found the slot at its capacity.',
    (c) => c.totalBackpressureStalls,
  ],
  [
    'skippr_sf_sender_terminal_error',
    'gauge',
    '1 once the sender latched a terminal error (it sends nothing more), else 0.',
    (c) => (c.lastTerminalError === null ? 0 : 1),
  ],
  [
    'skippr_sf_sender_unacked_frames',
    'gauge',
    'Frames appended to the slot and not acknowledged yet (published FSN minus acked FSN).',
    (_, sender) => Number(sender.publishedFsn - sender.ackedFsn),
  ],
  [
    'skippr_sf_drainers_active',
    'gauge',
    'Orphan slot drainers running now.',
    (c) => c.activeBackgroundDrainers,
  ],
  [
    'skippr_sf_drainers_succeeded_total',
    'counter',
    'Orphan slots drained to the end.',
    (c) => c.totalBackgroundDrainersSucceeded,
  ],
  [
    'skippr_sf_drainers_failed_total',
    'counter',
    'Orphan slots given up on (marked .failed).',
    (c) => c.totalBackgroundDrainersFailed,
  ],
]

/**
 * The sender's metrics, each sample carrying `labels`; register them with
 * `registry.registerMetric(metric)`. A registry holds one metric of a name: for several senders, give
 * each its own registry.
 */
export function senderMetrics(sender: Sender, labels: MetricLabels = {}): MetricView[] {
  return METRICS.map(([name, type, help, pick]) => ({
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({
      name,
      help,
      type,
      aggregator: 'sum',
      values: [{ value: pick(sender.counters(), sender), labels }],
    }),
  }))
}
