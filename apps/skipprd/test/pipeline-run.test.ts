import { rm } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  cannotLand,
  encodeCsv,
  hasCode,
  MemorySink,
  type NamespaceSchema,
  retryLater,
  type SinkBatch,
  type Source,
  type SourceChunk,
  type WriteOutcome,
} from '@skippr/connector-api'
import { openStateStore } from '@skippr/state'
import { openWal, resolveWalSettings } from '@skippr/wal'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { BATCH_REJECTED, INTERRUPTED, LANDING_INCOMPLETE, SOURCE_FAILED } from '../src/errors.js'
import { type Chaos, noChaos } from '../src/runner/chaos.js'
import { runPipeline } from '../src/runner/pipeline-run.js'
import { FIELDS, harness, itemChunks, landedIds, memorySource, SCHEMA, tempDir } from './support/runner.js'

let dir: string
beforeEach(async () => {
  dir = await tempDir()
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1)

describe('runPipeline --once', () => {
  it('lands every row once, reporting the seed sequence of events', async () => {
    const sink = new MemorySink()
    const h = harness(
      dir,
      () => memorySource(),
      () => sink,
    )
    const result = await runPipeline(h.options())
    expect(result).toMatchObject({ status: 'completed', rowsRead: 50, rowsWritten: 50, namespaces: 1 })
    expect(landedIds(sink)).toEqual(ids(50))
    expect(h.events.map((e) => (e.type === 'phase' ? `${e.state} ${e.phase}` : e.type))).toEqual([
      'start',
      'namespace_discovered',
      'start Ingesting',
      'done Ingesting',
      'start Finalising',
      'done Finalising',
      'complete',
    ])
    expect(h.events[1]).toMatchObject({ namespace: 'items', fieldCount: 2 })
  })

  it('resumes from the committed offset on a rerun: nothing lands twice', async () => {
    const sink = new MemorySink()
    const h = harness(
      dir,
      () => memorySource(),
      () => sink,
    )
    await runPipeline(h.options())
    const again = await runPipeline(h.options())
    expect(again).toMatchObject({ status: 'completed', rowsRead: 0, rowsWritten: 0 })
    expect(landedIds(sink)).toEqual(ids(50))
    // The saved schema is used: no second discovery.
    expect(h.events.filter((e) => e.type === 'namespace_discovered')).toHaveLength(1)
  })

  it('exits "retry later" when batches cannot land in the budget, and a later run lands them first', async () => {
    const down = new MemorySink()
    down.write = async () => retryLater(new Error('connection refused'))
    const failing = harness(
      dir,
      () => memorySource(),
      () => down,
    )
    const error = await runPipeline(failing.options({ retryBudgetMs: 300 })).catch((e: unknown) => e)
    expect(hasCode(error, LANDING_INCOMPLETE)).toBe(true)
    expect((error as Error).message).toMatch(
      /could not land within 0.3 s \(connection refused\); they stay in the WAL: retry later/,
    )
    expect(failing.events.at(-1)).toMatchObject({ type: 'error' })

    const sink = new MemorySink()
    const later = harness(
      dir,
      () => memorySource(),
      () => sink,
    )
    const result = await runPipeline(later.options())
    expect(result).toMatchObject({ status: 'completed', rowsRead: 0, rowsWritten: 50 })
    expect(landedIds(sink)).toEqual(ids(50))
  })

  it('stops on a rejected batch, keeping it in the WAL for a later run', async () => {
    const rejecting = new MemorySink()
    let writes = 0
    rejecting.write = async (batch: SinkBatch) => {
      if (++writes > 1) return cannotLand(new Error('value too long for column name'))
      return MemorySink.prototype.write.call(rejecting, batch)
    }
    const h = harness(
      dir,
      () => memorySource(),
      () => rejecting,
    )
    const error = await runPipeline(h.options()).catch((e: unknown) => e)
    expect(hasCode(error, BATCH_REJECTED)).toBe(true)
    expect((error as Error).message).toMatch(
      /the destination rejected batch items\/[0-9a-f]+\/\d+: value too long/,
    )
    expect(writes).toBe(2)
    const first = landedIds(rejecting)

    const sink = new MemorySink()
    const fixed = harness(
      dir,
      () => memorySource(),
      () => sink,
    )
    await runPipeline(fixed.options())
    expect([...first, ...landedIds(sink)]).toEqual(ids(50))
  })

  it('retries a sink that throws, and lands each batch once', async () => {
    const flaky = new MemorySink()
    let calls = 0
    flaky.write = async (batch: SinkBatch) => {
      if (++calls % 2 === 1) throw new Error('socket hang up')
      return MemorySink.prototype.write.call(flaky, batch)
    }
    const h = harness(
      dir,
      () => memorySource(),
      () => flaky,
    )
    await runPipeline(h.options())
    expect(landedIds(flaky)).toEqual(ids(50))
  })

  it('opens the destination and prepares its tables even when nothing is to be landed', async () => {
    const sink = new MemorySink()
    const h = harness(
      dir,
      () => memorySource([]),
      () => sink,
    )
    expect(await runPipeline(h.options())).toMatchObject({ status: 'completed', rowsRead: 0 })
    expect([...sink.schemas.keys()]).toEqual(['items'])
  })

  it('does not wait for a destination that never opens when nothing is to be landed', async () => {
    const h = harness(
      dir,
      () => memorySource([]),
      // A destination that never answers: creating the sink never settles.
      () => new Promise<never>(() => {}) as unknown as MemorySink,
    )
    expect(await runPipeline(h.options())).toMatchObject({ status: 'completed', rowsRead: 0 })
  })

  it('keeps the data in the WAL when the pipeline has no data_sink', async () => {
    const h = harness(dir, () => memorySource(), undefined)
    const result = await runPipeline(h.options())
    expect(result).toMatchObject({ status: 'completed', rowsWritten: 50 })
    const store = await openStateStore({ dataDir: dir })
    const wal = await openWal({
      pipeline: 'items',
      dataDir: dir,
      positions: { load: () => store.pipeline('items').getResumeOffset(), save: async () => {} },
    })
    let rows = 0
    for await (const batch of wal.pending()) for (const part of batch.parts) rows += part.rows
    await wal.close()
    await store.close()
    expect(rows).toBe(50)
  })

  it('reports a failing source as a source failure', async () => {
    const broken: Source = {
      discover: async () => [SCHEMA],
      // biome-ignore lint/correctness/useYield: a source that fails before its first chunk
      read: async function* () {
        throw new Error('permission denied for table items')
      },
      close: async () => {},
    }
    const h = harness(
      dir,
      () => broken,
      () => new MemorySink(),
    )
    const error = await runPipeline(h.options()).catch((e: unknown) => e)
    expect(hasCode(error, SOURCE_FAILED)).toBe(true)
    expect((error as Error).message).toContain('permission denied for table items')
  })
})

/** How long a held write waits at most: a premise that never comes true fails an assertion, not the run. */
const HOLD_LIMIT_MS = 10_000

/**
 * A sink taking up to three writes at once; each write is held by `hold` (given its arrival, 0 for the
 * first write) before it lands. Holding on events rather than for set times keeps the order the
 * tests rely on however slow the machine is.
 */
class ConcurrentSink extends MemorySink {
  readonly concurrentWrites = 3
  inFlight = 0
  maxInFlight = 0
  readonly finished: bigint[] = []
  readonly outcomes: string[] = []
  reject: bigint | undefined

  constructor(private readonly hold: (arrival: number) => Promise<unknown>) {
    super()
  }

  /** Resolves once `condition` holds, or after HOLD_LIMIT_MS. */
  async until(condition: () => boolean): Promise<void> {
    const deadline = Date.now() + HOLD_LIMIT_MS
    while (!condition() && Date.now() < deadline) await sleep(5)
  }

  get landed(): number {
    return this.outcomes.filter((status) => status === 'landed').length
  }

  override async write(batch: SinkBatch): Promise<WriteOutcome> {
    const arrival = this.inFlight + this.finished.length
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight)
    await this.hold(arrival)
    this.inFlight--
    this.finished.push(batch.id.seq)
    const outcome =
      batch.id.seq === this.reject ? cannotLand(new Error('value too long')) : await super.write(batch)
    this.outcomes.push(outcome.status)
    return outcome
  }
}

describe('runPipeline with a sink that takes concurrent writes', () => {
  it('overlaps writes up to the limit and marks them landed in commit order, whatever order they end in', async () => {
    // The first write is held until a later one has finished, so they end out of commit order.
    const sink: ConcurrentSink = new ConcurrentSink((arrival) =>
      arrival === 0 ? sink.until(() => sink.finished.length > 0) : sleep(5),
    )
    const h = harness(
      dir,
      () => memorySource(itemChunks(12, 5)),
      () => sink,
    )
    const result = await runPipeline(h.options())
    expect(result).toMatchObject({ status: 'completed', rowsWritten: 60 })
    expect(landedIds(sink).sort((a, b) => a - b)).toEqual(ids(60))
    expect(sink.maxInFlight).toBeGreaterThan(1)
    expect(sink.maxInFlight).toBeLessThanOrEqual(3)
    const inCommitOrder = [...sink.finished].sort((a, b) => (a < b ? -1 : 1))
    expect(sink.finished).not.toEqual(inCommitOrder)
    // Every batch was marked: the WAL holds nothing more, so a rerun writes nothing.
    const writes = sink.outcomes.length
    const again = await runPipeline(h.options())
    expect(again).toMatchObject({ rowsRead: 0, rowsWritten: 0 })
    expect(sink.outcomes).toHaveLength(writes)
  })

  it('keeps a rejected batch and the batches written beside it for the next run, which lands each once', async () => {
    // The second batch (FSN 2 of a fresh WAL) is held until a later one has landed beside it, then
    // rejected.
    const sink: ConcurrentSink = new ConcurrentSink((arrival) =>
      arrival === 1 ? sink.until(() => sink.landed >= 2) : sleep(5),
    )
    sink.reject = 2n
    const h = harness(
      dir,
      () => memorySource(itemChunks(6, 5)),
      () => sink,
    )
    const error = await runPipeline(h.options()).catch((e: unknown) => e)
    expect(hasCode(error, BATCH_REJECTED)).toBe(true)
    const landedBeside = sink.landed - 1
    expect(landedBeside).toBeGreaterThan(0)

    sink.reject = undefined
    sink.outcomes.length = 0
    await runPipeline(h.options())
    // Those were written again and recognised; every row is in the destination once.
    expect(sink.outcomes.filter((status) => status === 'already-landed')).toHaveLength(landedBeside)
    expect(landedIds(sink).sort((a, b) => a - b)).toEqual(ids(30))
  })
})

describe('runPipeline --once stopped by a signal', () => {
  it('finishes the write in progress, keeps the rest in the WAL and fails with "run sync again"', async () => {
    const stop = new AbortController()
    const slow = new MemorySink()
    slow.write = async (batch: SinkBatch) => {
      const outcome = await MemorySink.prototype.write.call(slow, batch)
      stop.abort('SIGINT')
      await new Promise((resolve) => setTimeout(resolve, 50))
      return outcome
    }
    const h = harness(
      dir,
      () => memorySource(),
      () => slow,
    )
    const error = await runPipeline(h.options({ stop: stop.signal })).catch((e: unknown) => e)
    expect(hasCode(error, INTERRUPTED)).toBe(true)
    expect((error as Error).message).toBe(
      "pipeline 'items': sync --once was stopped by SIGINT before every committed batch landed; they stay in the WAL: run sync again",
    )
    const landedFirst = landedIds(slow)
    expect(landedFirst.length).toBeGreaterThan(0)
    expect(landedFirst.length).toBeLessThan(50)

    const sink = new MemorySink()
    await runPipeline(
      harness(
        dir,
        () => memorySource(),
        () => sink,
      ).options(),
    )
    expect([...landedFirst, ...landedIds(sink)]).toEqual(ids(50))
  })
})

describe('runPipeline skipping', () => {
  it('skips a disabled pipeline with the seed line, before touching the source', async () => {
    const store = await openStateStore({ dataDir: dir })
    await store.pipeline('items').setEnabled(false)
    await store.close()
    const h = harness(
      dir,
      () => {
        throw new Error('the source must not be opened')
      },
      () => new MemorySink(),
    )
    const result = await runPipeline(h.options())
    expect(result).toEqual({ status: 'skipped', reason: 'disabled' })
    expect(h.events).toEqual([
      {
        type: 'skipped',
        pipeline: 'items',
        reason: 'disabled',
        message: "Pipeline 'items' disabled, skipping.",
      },
    ])
  })

  it('honours sync_frequency_seconds when every pipeline is synced', async () => {
    const h = harness(
      dir,
      () => memorySource(),
      () => new MemorySink(),
    )
    await runPipeline(h.options())
    const result = await runPipeline(h.options({ honourFrequency: true }))
    expect(result).toEqual({ status: 'skipped', reason: 'frequency' })
    // The seconds count from the first run's end: 0 on an idle machine, more on a loaded one.
    expect(h.events.at(-1)).toMatchObject({
      message: expect.stringMatching(/^Pipeline 'items' last ran \d+ seconds ago, skipping\.$/),
    })
    // --pipeline runs ignore the frequency.
    expect(await runPipeline(h.options())).toMatchObject({ status: 'completed' })
  })
})

describe('runPipeline schemas', () => {
  it('saves an evolved schema as a new version and prepares the sink with it', async () => {
    const wider: NamespaceSchema = { ...SCHEMA, fields: [...FIELDS, { name: 'price', type: 'double' }] }
    const chunks = [
      ...itemChunks(1, 3),
      {
        namespace: 'items',
        format: 'csv' as const,
        rows: 1,
        body: encodeCsv([{ id: 4, name: 'item 4', price: 2.5 }], wider.fields),
        schema: wider,
      },
    ]
    const sink = new MemorySink()
    const prepared: string[][] = []
    const prepare = sink.prepare.bind(sink)
    sink.prepare = async (schema) => {
      prepared.push(schema.fields.map((f) => f.name))
      return prepare(schema)
    }
    const h = harness(
      dir,
      () => memorySource(chunks),
      () => sink,
    )
    await runPipeline(h.options())
    expect(prepared).toContainEqual(['id', 'name', 'price'])
    const parts = [...sink.batches.values()].flatMap((b) => b.parts)
    expect(parts.map((p) => [p.schemaVersion, p.schema.fields.length])).toEqual([
      [1, 2],
      [2, 3],
    ])
    const store = await openStateStore({ dataDir: dir })
    expect((await store.pipeline('items').getSchema('items'))?.version).toBe(2)
    await store.close()
  })
})

describe('runPipeline without --once', () => {
  it('runs until stopped, then flushes the buffer, lands what it can and releases the lease', async () => {
    const stop = new AbortController()
    // Resolves when the runner asks for more after the chunk: it has taken the chunk in.
    let chunkTaken!: () => void
    const following = new Promise<void>((resolve) => {
      chunkTaken = resolve
    })
    const tail: Source = {
      discover: async () => [SCHEMA],
      read: async function* (_from, options): AsyncIterable<SourceChunk> {
        yield { ...itemChunks(1, 3)[0]!, offset: 1 }
        chunkTaken()
        expect(options.follow).toBe(true)
        await new Promise((resolve) => options.signal.addEventListener('abort', resolve))
      },
      close: async () => {},
    }
    const sink = new MemorySink()
    const h = harness(
      dir,
      () => tail,
      () => sink,
    )
    // A large buffer: only the stop flushes it.
    const run = runPipeline({
      ...h.options({ once: false, stop: stop.signal }),
      wal: { ...h.options().wal, bufferThresholdBytes: 1 << 20 },
    })
    await following
    stop.abort('SIGTERM')
    expect(await run).toMatchObject({ status: 'completed', rowsRead: 3 })
    const store = await openStateStore({ dataDir: dir })
    expect((await store.pipeline('items').getLeaseInfo())?.released).toBe(true)
    await store.close()
    // The buffered rows were committed on stop and landed before the run ended: nothing is left.
    expect(landedIds(sink)).toEqual([1, 2, 3])
    const next = new MemorySink()
    await runPipeline(
      harness(
        dir,
        () => memorySource([]),
        () => next,
      ).options(),
    )
    expect(landedIds(next)).toEqual([])
  })
})

describe('runPipeline with a push source', () => {
  it('commits within its commit window and tells it each committed offset, in order, before it sends more', async () => {
    const stop = new AbortController()
    const committed: unknown[] = []
    let onCommitted: () => void = () => {}
    const push: Source = {
      discover: async () => [SCHEMA],
      commitWindow: { maxDelayMs: 20 },
      committed(offset) {
        committed.push(offset)
        onCommitted()
      },
      read: async function* (_from, _options): AsyncIterable<SourceChunk> {
        for (const [i, chunk] of itemChunks(3, 1).entries()) {
          const durable = new Promise<void>((resolve) => {
            onCommitted = resolve
          })
          yield { ...chunk, offset: { request: i + 1 } }
          // A push source answers its client here: the next request comes after this one's answer.
          await durable
        }
        stop.abort('SIGTERM')
      },
      close: async () => {},
    }
    const sink = new MemorySink()
    const h = harness(
      dir,
      () => push,
      () => sink,
    )
    // The pipeline's own thresholds would hold these small chunks for a minute.
    const run = runPipeline({
      ...h.options({ once: false, stop: stop.signal }),
      wal: { ...h.options().wal, bufferThresholdBytes: 1 << 20, bufferThresholdSeconds: 60 },
    })
    expect(await run).toMatchObject({ status: 'completed', rowsRead: 3 })
    expect(committed).toEqual([{ request: 1 }, { request: 2 }, { request: 3 }])
    expect(landedIds(sink)).toEqual([1, 2, 3])
  })

  it('fails the run when a commit of its window fails while no chunk follows, closing the source', async () => {
    let closed = false
    const idle: Source = {
      discover: async () => [SCHEMA],
      commitWindow: { maxDelayMs: 20 },
      read: async function* (_from, options): AsyncIterable<SourceChunk> {
        yield { ...itemChunks(1, 1)[0]!, offset: { request: 1 } }
        // A push source between requests: nothing more until a client sends.
        await new Promise((resolve) => options.signal.addEventListener('abort', resolve, { once: true }))
      },
      close: async () => {
        closed = true
      },
    }
    const h = harness(
      dir,
      () => idle,
      () => new MemorySink(),
    )
    const failing: Chaos = {
      ...noChaos,
      at(point) {
        if (point === 'after-commit') throw new Error('the commit failed')
      },
    }
    await expect(
      runPipeline({
        ...h.options({ once: false }),
        chaos: failing,
        wal: { ...h.options().wal, bufferThresholdBytes: 1 << 20, bufferThresholdSeconds: 60 },
      }),
    ).rejects.toThrow('the commit failed')
    expect(closed).toBe(true)
  })

  it('tells it when a commit waits for room in a full WAL, and when the WAL has room again', async () => {
    const heard: boolean[] = []
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    const sink = new MemorySink()
    const write = sink.write.bind(sink)
    // The destination lands nothing until the WAL has been full: the cap is what stops reading.
    sink.write = async (batch) => {
      await released
      return write(batch)
    }
    const stop = new AbortController()
    const chunk = itemChunks(1, 1)[0]!
    const megabyte = `${'x'.repeat(1 << 20)}`
    const source: Source = {
      discover: async () => [SCHEMA],
      commitWindow: { maxDelayMs: 20 },
      walFull(full) {
        heard.push(full)
        if (full) release()
        else stop.abort('SIGTERM')
      },
      read: async function* (): AsyncIterable<SourceChunk> {
        for (let i = 0; !stop.signal.aborted; i++) {
          const body = new TextEncoder().encode(`${i + 1},"${megabyte}"\n`)
          yield { ...chunk, body, offset: { request: i + 1 } }
          await sleep(1)
        }
      },
      close: async () => {},
    }
    const h = harness(
      dir,
      () => source,
      () => sink,
    )
    await runPipeline({
      ...h.options({ once: false, stop: stop.signal }),
      wal: resolveWalSettings({
        yaml: { buffer_threshold_bytes: 1 << 20 },
        env: { WAL_MAX_TOTAL_BYTES: String(26_214_400) },
      }),
    })
    expect(heard.slice(0, 2)).toEqual([true, false])
  })

  it('tells it each landed offset, in order, only once the destination holds the batch; a rerun first hears where landing reached', async () => {
    // Each entry: the offset told, and the ids the destination held at that moment.
    const heard: { offset: unknown; held: number[] }[] = []
    const sink = new MemorySink()
    const pushSource = (chunks: number, stop: AbortController): Source => ({
      discover: async () => [SCHEMA],
      commitWindow: { maxDelayMs: 20 },
      landed(offset) {
        heard.push({ offset, held: landedIds(sink) })
        if (heard.length === chunks) stop.abort('SIGTERM')
      },
      read: async function* (): AsyncIterable<SourceChunk> {
        for (const [i, chunk] of itemChunks(chunks, 1).entries()) {
          yield { ...chunk, offset: { request: i + 1 } }
          await sleep(50)
        }
      },
      close: async () => {},
    })
    const run = (source: Source, stop: AbortController) => {
      const h = harness(
        dir,
        () => source,
        () => sink,
      )
      // The commit window, not the harness's tiny byte threshold, decides when batches commit.
      return runPipeline({
        ...h.options({ once: false, stop: stop.signal }),
        wal: { ...h.options().wal, bufferThresholdBytes: 1 << 20 },
      })
    }
    const first = new AbortController()
    await run(pushSource(3, first), first)
    expect(heard.map((h) => h.offset)).toEqual([{ request: 1 }, { request: 2 }, { request: 3 }])
    // The destination holds every batch up to the one told (a later one may already have landed too:
    // writes overlap, marks follow commit order).
    for (const [i, { held }] of heard.entries())
      expect(held).toEqual(expect.arrayContaining([1, 2, 3].slice(0, i + 1)))
    heard.length = 0
    const second = new AbortController()
    setTimeout(() => second.abort('SIGTERM'), 200)
    await run(pushSource(0, second), second)
    expect(heard[0]).toEqual({ offset: { request: 3 }, held: [1, 2, 3] })
  })
})
