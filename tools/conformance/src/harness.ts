import type { Sink } from '@skippr/connector-api'

/**
 * How a suite reaches one sink implementation. The destination stays the same for the whole
 * suite; every case uses its own pipeline and namespace names, so cases do not see each other.
 */
export interface SinkHarness {
  /** Shown in the test names, e.g. `duckdb`. */
  readonly name: string
  /**
   * A new sink instance on the suite's destination. Called again to simulate a restart: the suite
   * closes the old instance first, as a crashed process would have released it.
   */
  createSink(): Promise<Sink>
  /**
   * Every row of a namespace as the destination holds it, keyed by column name, with values as
   * the driver returns them (bigint, Date, JSON text, …); the suite compares them in a canonical
   * form. A namespace that holds nothing (or does not exist) yields `[]`.
   */
  readRows(namespace: string): Promise<Record<string, unknown>[]>
  /** Runs once before the suite, e.g. to create a temp dir or a fresh database schema. */
  setup?(): Promise<void>
  /** Runs once after the suite. */
  cleanup?(): Promise<void>
}
