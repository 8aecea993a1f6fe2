/**
 * Per-suite plumbing: unique names per case, and closing every sink a case opened so that a
 * failing case does not leave a destination locked for the next one.
 */
import { randomBytes } from 'node:crypto'
import type { Field, Sink, WriteOutcome } from '@skippr/connector-api'
import { afterAll, afterEach, beforeAll, expect } from 'vitest'
import type { Canonical } from './canonical.js'
import { canonicalRows } from './canonical.js'
import type { Row } from './fixtures.js'
import type { SinkHarness } from './harness.js'

export interface Session {
  /** A name unique to this suite run, safe in any destination: `conf_<tag>_<label>`. */
  name(label: string): string
  /** Opens a sink; it is closed after the case unless the case closes it first. */
  open(): Promise<Sink>
  /** Closes a sink now, like a process that stops (or crashes) would release it. */
  close(sink: Sink): Promise<void>
  /** The namespace's rows, canonical and sorted. */
  rows(namespace: string, fields: readonly Field[]): Promise<Record<string, Canonical>[]>
  /** The namespace's rows as the harness reads them, with the part key each was tagged with. */
  tagged(namespace: string): Promise<Record<string, unknown>[]>
}

export function useSession(harness: SinkHarness): Session {
  const tag = randomBytes(4).toString('hex')
  const open = new Set<Sink>()
  beforeAll(async () => harness.setup?.())
  afterEach(async () => {
    for (const sink of open) await sink.close()
    open.clear()
  })
  afterAll(async () => harness.cleanup?.())
  return {
    name: (label) => `conf_${tag}_${label}`,
    async open() {
      const sink = await harness.createSink()
      open.add(sink)
      return sink
    },
    async close(sink) {
      open.delete(sink)
      await sink.close()
    },
    async rows(namespace, fields) {
      return canonicalRows(await harness.readRows(namespace), fields)
    },
    tagged: (namespace) => harness.readRows(namespace),
  }
}

/** The rows a destination should hold after landing `rows`, in the same canonical form. */
export function expected(rows: readonly Row[], fields: readonly Field[]): Record<string, Canonical>[] {
  return canonicalRows(rows, fields)
}

export function expectLanded(outcome: WriteOutcome, rows: number): void {
  expect(outcome.status === 'landed' ? outcome : describeOutcome(outcome)).toEqual({ status: 'landed', rows })
}

/** An outcome with its error as text, so a failed expectation shows the sink's message. */
export function describeOutcome(outcome: WriteOutcome): unknown {
  return 'error' in outcome ? { status: outcome.status, error: outcome.error.message } : outcome
}
