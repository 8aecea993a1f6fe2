/**
 * The receiver's counters (`@skippr/sf`'s `receiver.counters()`) as the runner's metrics
 * (connector-api's `Meter`), read at each scrape; zeros before the receiver listens.
 */
import type { Meter } from '@skippr/connector-api'
import type { ReceiverCounters } from '@skippr/sf'

export function publishReceiverMetrics(meter: Meter, counters: () => ReceiverCounters | undefined): void {
  const read = (pick: (c: ReceiverCounters) => number) => () => {
    const now = counters()
    return now === undefined ? 0 : pick(now)
  }
  meter.gauge(
    'skippr_push_ws_senders_connected',
    'Senders connected now (welcomed, connection open).',
    read((c) => c.sendersConnected),
  )
  meter.counter(
    'skippr_push_ws_sessions_opened_total',
    'Sender connections welcomed: first connections and reconnects.',
    read((c) => c.sessionsOpened),
  )
  meter.counter(
    'skippr_push_ws_frames_received_total',
    'Frames received from senders, replays included.',
    read((c) => c.framesReceived),
  )
  meter.counter(
    'skippr_push_ws_frames_replayed_total',
    'Frames received that were already received (replayed after a reconnect): acked, not appended again.',
    read((c) => c.framesReplayed),
  )
  meter.counter('skippr_push_ws_errors_sent_total', 'Error frames sent to senders, by category.', () =>
    Object.entries(counters()?.errorsSent ?? {}).map(([category, value]) => ({
      value,
      labels: { category },
    })),
  )
}
