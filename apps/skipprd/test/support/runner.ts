/** Builds `runPipeline` options around in-memory connectors, with the real WAL and state store in a temp dir. */
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import {
  encodeCsv,
  type Field,
  type MemorySink,
  MemorySource,
  type NamespaceSchema,
  type Sink,
  type SinkDefinition,
  type Source,
  type SourceChunk,
  type SourceDefinition,
} from '@skippr/connector-api'
import { resolveWalSettings } from '@skippr/wal'
import pino from 'pino'
import * as v from 'valibot'
import type { PipelineSettings } from '../../src/config/settings.js'
import type { ResolvedConnector } from '../../src/connectors.js'
import { noChaos } from '../../src/runner/chaos.js'
import type { SyncEvent } from '../../src/runner/events.js'
import type { PipelineRunOptions } from '../../src/runner/pipeline-run.js'

export const FIELDS: Field[] = [
  { name: 'id', type: 'long' },
  { name: 'name', type: 'string' },
]
export const SCHEMA: NamespaceSchema = { namespace: 'items', fields: FIELDS, primaryKey: ['id'] }

/** `chunks` chunks of `rowsPerChunk` rows each, ids 1..n. */
export function itemChunks(chunks: number, rowsPerChunk: number): Omit<SourceChunk, 'offset'>[] {
  return Array.from({ length: chunks }, (_, c) => {
    const rows = Array.from({ length: rowsPerChunk }, (_, r) => {
      const id = c * rowsPerChunk + r + 1
      return { id, name: `item ${id}` }
    })
    return { namespace: 'items', format: 'csv' as const, rows: rows.length, body: encodeCsv(rows, FIELDS) }
  })
}

export function memorySource(chunks = itemChunks(5, 10), schemas = [SCHEMA]): Source {
  return new MemorySource(schemas, chunks)
}

export async function tempDir(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'skippr-'))
}

export interface Harness {
  readonly events: SyncEvent[]
  options(overrides?: Partial<PipelineRunOptions>): PipelineRunOptions
}

export function harness(
  dataDir: string,
  source: () => Source,
  sink: (() => Sink) | undefined,
  deadletterSink?: () => Sink,
): Harness {
  const events: SyncEvent[] = []
  const settings: PipelineSettings = {
    name: 'items',
    sourceEntry: 'memory',
    sinkEntry: sink && 'memory',
    deadletterSinkEntry: deadletterSink && 'memory',
    dataDir,
    syncFrequencySeconds: 900,
    chaos: false,
    bufferThresholdBytes: 64,
    bufferThresholdSeconds: 60,
    walStorage: 'disk',
    store: { type: 'sled', name: undefined, endpoint: undefined, create: false, packageDir: dataDir },
    workspace: 'default',
  }
  const sourceDefinition: SourceDefinition = {
    kind: 'source',
    type: 'Memory',
    config: v.strictObject({}),
    create: () => source(),
  }
  const memorySink = (create: () => Sink): ResolvedConnector<SinkDefinition> => ({
    entry: 'memory',
    type: 'Memory',
    definition: {
      kind: 'sink',
      type: 'Memory',
      guarantee: 'exactly-once',
      config: v.strictObject({}),
      create,
    },
    config: {},
    secrets: [],
  })
  return {
    events,
    options: (overrides = {}) => ({
      settings,
      wal: resolveWalSettings({ yaml: { buffer_threshold_bytes: 64 }, env: {} }),
      source: { entry: 'memory', type: 'Memory', definition: sourceDefinition, config: {}, secrets: [] },
      sink: sink && memorySink(sink),
      deadletterSink: deadletterSink && memorySink(deadletterSink),
      configDir: dataDir,
      env: {},
      once: true,
      honourFrequency: false,
      logger: pino({ level: 'silent' }),
      listener: (event) => events.push(event),
      stop: new AbortController().signal,
      chaos: noChaos,
      retryBudgetMs: 60_000,
      leaseWaitMs: 1_000,
      leaseTtlMs: undefined,
      ...overrides,
    }),
  }
}

/** Ids landed in a MemorySink, in landing order. */
export function landedIds(sink: MemorySink): number[] {
  const ids: number[] = []
  for (const batch of sink.batches.values())
    for (const part of batch.parts)
      for (const line of Buffer.from(part.body).toString('utf8').trim().split('\n'))
        ids.push(Number(line.split(',')[0]))
  return ids
}
