/**
 * The contract every WAL backend type (`WalBackendType` of @skippr/wal) keeps, run against each
 * storage for real: the WAL's commit, landing, reset and crash rules are built on it. A log of frames
 * numbered 1, 2, 3, … that are never reused while the log exists, read back in order with bounded
 * reads; a cumulative ack watermark that survives a reopen; one metadata record replaced whole; a
 * clear() that starts the log again from FSN 1 and leaves the record; and a snapshot view for other
 * processes that sees the published frames and the record without taking the writer's lock.
 */
import { randomBytes, randomInt } from 'node:crypto'
import { setImmediate } from 'node:timers/promises'
import type { BackendOptions, WalBackend, WalBackendType, WalFrame, WalMeta } from '@skippr/wal'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

export interface WalBackendHarness {
  /** Shown in the test names, e.g. `disk`. */
  readonly name: string
  /**
   * Once, before the suite: the backend type under test and the data directory its logs go in. Every
   * case uses a pipeline of its own, so one directory serves the suite.
   */
  setup(): Promise<{ readonly backend: WalBackendType; readonly dataDir: string }>
  cleanup?(): Promise<void>
}

/** Small files, so a few dozen frames span several of them and acks let whole files go. */
const BYTES_PER_FILE = 64 * 1024

export function walBackendSuite(harness: WalBackendHarness): void {
  describe(`${harness.name}: WAL backend contract`, () => {
    const tag = randomBytes(4).toString('hex')
    let type: WalBackendType
    let dataDir: string
    let pipelines = 0
    const opened = new Set<WalBackend>()
    beforeAll(async () => {
      ;({ backend: type, dataDir } = await harness.setup())
    })
    afterEach(async () => {
      await Promise.all([...opened].map((backend) => backend.close()))
      opened.clear()
    })
    afterAll(async () => harness.cleanup?.())

    const newPipeline = () => `conf-${tag}-${++pipelines}`
    const options = (pipeline: string): BackendOptions => ({
      pipeline,
      dataDir,
      bytesPerFile: BYTES_PER_FILE,
      maxTotalBytes: 1024 * 1024 * 1024,
      keepFreeBytes: 0,
      keepFreeBatches: 0,
      logger: undefined,
    })
    async function open(pipeline: string): Promise<WalBackend> {
      const backend = await type.open(options(pipeline))
      opened.add(backend)
      return backend
    }
    async function close(backend: WalBackend): Promise<void> {
      opened.delete(backend)
      await backend.close()
    }
    const snapshotOf = (pipeline: string) => type.openSnapshot({ pipeline, dataDir })

    it('appends frames with increasing FSNs from 1 and reads them back in order, byte for byte', async () => {
      const log = await open(newPipeline())
      expect([log.publishedFsn, log.ackedFsn]).toEqual([0n, 0n])
      const payloads = frames(40)
      const fsns: bigint[] = []
      for (const [i, payload] of payloads.entries()) {
        // Pieces are stored back to back; a sealed file does not break the numbering.
        fsns.push(await log.append(i % 3 === 0 ? halves(payload) : payload))
        if (i === 20) await log.seal()
      }
      expect(fsns).toEqual(payloads.map((_, i) => BigInt(i + 1)))
      expect(log.publishedFsn).toBe(40n)
      expect(await readAll(log.read(1n))).toEqual(numbered(payloads, 1n))
    })

    it('takes a frame of maxFrameBytes', async () => {
      const log = await open(newPipeline())
      const big = Uint8Array.from(randomBytes(log.maxFrameBytes))
      const fsn = await log.append(big)
      expect(await readAll(log.read(fsn))).toEqual([{ fsn, payload: big }])
    })

    it('reads from an FSN to the end, in order, and stops even while frames are appended', async () => {
      const log = await open(newPipeline())
      const payloads = frames(30)
      for (const payload of payloads) await log.append(payload)
      expect(await readAll(log.read(12n))).toEqual(numbered(payloads, 1n).slice(11))
      expect(await readAll(log.read(31n))).toEqual([])
      const seen: bigint[] = []
      for await (const { fsn } of log.read(25n)) {
        seen.push(fsn)
        if (seen.length <= 3) await log.append(frames(1)[0]!)
      }
      // The frames to the end as published when the read got there: at least the 30, at most all 33.
      expect(seen.slice(0, 6)).toEqual([25n, 26n, 27n, 28n, 29n, 30n])
      expect(seen).toEqual(seen.map((_, i) => 25n + BigInt(i)))
      expect(seen.length).toBeLessThanOrEqual(9)
    })

    it('keeps the ack watermark and the frames after it over close and reopen', async () => {
      const pipeline = newPipeline()
      let log = await open(pipeline)
      const payloads = frames(30)
      for (const payload of payloads) await log.append(payload)
      await log.ack(17n)
      expect(log.ackedFsn).toBe(17n)
      await close(log)
      log = await open(pipeline)
      expect([log.publishedFsn, log.ackedFsn]).toEqual([30n, 17n])
      expect(await readAll(log.read(18n))).toEqual(numbered(payloads, 1n).slice(17))
      // Storage at or below the watermark may have gone: a read from 1 starts at the oldest frame kept.
      const fromStart = await readAll(log.read(1n))
      expect(fromStart.at(-1)?.fsn).toBe(30n)
      expect(fromStart[0]!.fsn).toBeLessThanOrEqual(18n)
      expect(fromStart).toEqual(numbered(payloads, 1n).slice(Number(fromStart[0]!.fsn) - 1))
    })

    it('never reuses an FSN, also once every frame was acked and its files went', async () => {
      const pipeline = newPipeline()
      let log = await open(pipeline)
      for (const payload of frames(30)) await log.append(payload)
      await log.ack(30n)
      await close(log)
      log = await open(pipeline)
      expect(log.publishedFsn).toBe(30n)
      expect(await readAll(log.read(1n))).toEqual([])
      const next = frames(1)[0]!
      expect(await log.append(next)).toBe(31n)
      expect(await readAll(log.read(31n))).toEqual([{ fsn: 31n, payload: next }])
    })

    it('replaces the metadata record whole: a reader sees the old record or the new one, never neither', async () => {
      const pipeline = newPipeline()
      let log = await open(pipeline)
      expect(await log.readMeta()).toBeUndefined()
      const metas = Array.from(
        { length: 40 },
        (_, i): WalMeta => ({ epoch: epoch(), resetting: i % 2 === 1 }),
      )
      await log.writeMeta(metas[0]!)
      const source = await snapshotOf(pipeline)
      let writing = true
      const reads: Array<WalMeta | undefined> = []
      const reader = (async () => {
        while (writing) {
          reads.push(await source.readMeta())
          // A reader of a store answered in-process (no I/O) must not starve the writer.
          await setImmediate()
        }
      })()
      for (const meta of metas.slice(1)) await log.writeMeta(meta)
      writing = false
      await reader
      expect(reads.length).toBeGreaterThan(0)
      for (const read of reads) expect(metas).toContainEqual(read)
      expect(await log.readMeta()).toEqual(metas.at(-1))
      await close(log)
      log = await open(pipeline)
      expect(await log.readMeta()).toEqual(metas.at(-1))
    })

    it('clear() deletes every frame and the watermark, starts again from FSN 1, and keeps the record', async () => {
      const pipeline = newPipeline()
      let log = await open(pipeline)
      for (const payload of frames(30)) await log.append(payload)
      await log.ack(10n)
      const meta: WalMeta = { epoch: epoch(), resetting: true }
      await log.writeMeta(meta)
      await log.clear()
      expect([log.publishedFsn, log.ackedFsn]).toEqual([0n, 0n])
      expect(await readAll(log.read(1n))).toEqual([])
      const fresh = frames(3)
      for (const payload of fresh) await log.append(payload)
      expect(await readAll(log.read(1n))).toEqual(numbered(fresh, 1n))
      // A reset that crashes after clear() finds its record still saying so.
      expect(await log.readMeta()).toEqual(meta)
      await close(log)
      log = await open(pipeline)
      expect([log.publishedFsn, log.ackedFsn]).toEqual([3n, 0n])
      expect(await readAll(log.read(1n))).toEqual(numbered(fresh, 1n))
    })

    it('the snapshot view sees the frames after the watermark up to the published FSN, and the record', async () => {
      const pipeline = newPipeline()
      const log = await open(pipeline)
      const payloads = frames(30)
      for (const payload of payloads) await log.append(payload)
      await log.ack(12n)
      const meta: WalMeta = { epoch: epoch(), resetting: false }
      await log.writeMeta(meta)
      const source = await snapshotOf(pipeline)
      expect(source.location).not.toBe('')
      expect(await source.readMeta()).toEqual(meta)
      const view = await source.openLog()
      expect(view.ackedFsn).toBe(12n)
      expect(await readAll(view.frames())).toEqual(numbered(payloads, 1n).slice(12))
      const later = await source.openLog()
      expect(await readAll(later.frames(20n))).toEqual(numbered(payloads, 1n).slice(19))
    })

    it('the snapshot view of a log never written is empty', async () => {
      const source = await snapshotOf(newPipeline())
      expect(await source.readMeta()).toBeUndefined()
      const view = await source.openLog()
      expect(view.ackedFsn).toBe(0n)
      expect(await readAll(view.frames())).toEqual([])
    })

    it('the snapshot view takes no lock: the writer opens, appends, acks and reopens while one is open', async () => {
      const pipeline = newPipeline()
      let log = await open(pipeline)
      const payloads = frames(20)
      for (const payload of payloads.slice(0, 10)) await log.append(payload)
      const source = await snapshotOf(pipeline)
      const view = await source.openLog()
      for (const payload of payloads.slice(10)) await log.append(payload)
      await log.ack(15n)
      await close(log)
      log = await open(pipeline)
      expect([log.publishedFsn, log.ackedFsn]).toEqual([20n, 15n])
      // What it holds is still a prefix of the log after its watermark (frames acked meanwhile may go).
      const seen = await readAll(view.frames())
      const first = Number(seen[0]?.fsn ?? 11n)
      expect(seen).toEqual(numbered(payloads, 1n).slice(first - 1, first - 1 + seen.length))
      expect(first).toBeLessThanOrEqual(16)
      expect(first + seen.length - 1).toBeGreaterThanOrEqual(10)
      await view.close()
      // And a view opened now sees the writer's latest state.
      const now = await source.openLog()
      expect(now.ackedFsn).toBe(15n)
      expect(await readAll(now.frames())).toEqual(numbered(payloads, 1n).slice(15))
    })
  })
}

/** `count` random payloads of 1 byte to 12 KiB: 30 of them fill several files of BYTES_PER_FILE. */
function frames(count: number): Uint8Array[] {
  return Array.from({ length: count }, () => Uint8Array.from(randomBytes(1 + randomInt(12 * 1024))))
}

function halves(payload: Uint8Array): Uint8Array[] {
  const middle = Math.floor(payload.length / 2)
  return [payload.subarray(0, middle), payload.subarray(middle)]
}

function numbered(payloads: readonly Uint8Array[], first: bigint): WalFrame[] {
  return payloads.map((payload, i) => ({ fsn: first + BigInt(i), payload }))
}

/**
 * Every frame of a read, compared as plain bytes once the read ended: a payload must stay valid after
 * the frames after it were read.
 */
async function readAll(read: AsyncIterable<WalFrame>): Promise<WalFrame[]> {
  const out: WalFrame[] = []
  for await (const frame of read) out.push(frame)
  return out.map(({ fsn, payload }) => ({ fsn, payload: Uint8Array.from(payload) }))
}

function epoch(): string {
  return randomBytes(8).toString('hex')
}
