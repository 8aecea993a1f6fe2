/**
 * What the HttpServer source counts for the runner's metrics (connector-api's `Meter`): plain numbers,
 * read at each scrape. Statuses are the few this source answers with, so the `code` label is bounded.
 */
import type { Meter } from '@skippr/connector-api'

export class HttpServerMetrics {
  private readonly answers = new Map<number, number>()
  private requestBytes = 0
  private rowsAccepted = 0
  private walFullRefusals = 0

  answered(status: number): void {
    this.answers.set(status, (this.answers.get(status) ?? 0) + 1)
  }

  /** A request body read whole. */
  received(bytes: number): void {
    this.requestBytes += bytes
  }

  /** Rows of a request whose commit went through (a repeated Idempotency-Key adds none). */
  accepted(rows: number): void {
    this.rowsAccepted += rows
  }

  /** A request answered 429 because the WAL is at its cap. */
  refusedWalFull(): void {
    this.walFullRefusals++
  }

  publish(meter: Meter): void {
    meter.counter('skippr_push_http_requests_total', 'Requests answered, by HTTP status.', () =>
      [...this.answers].map(([code, value]) => ({ value, labels: { code: String(code) } })),
    )
    meter.counter(
      'skippr_push_http_request_bytes_total',
      'Bytes of request bodies received.',
      () => this.requestBytes,
    )
    meter.counter(
      'skippr_push_http_rows_accepted_total',
      'Rows of requests answered 200 once committed to the WAL.',
      () => this.rowsAccepted,
    )
    meter.counter(
      'skippr_push_http_wal_full_refusals_total',
      'Requests answered 429 because the WAL was full (the destination lands more slowly than clients send).',
      () => this.walFullRefusals,
    )
  }
}
