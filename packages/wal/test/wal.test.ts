import * as fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { openSlot } from '@skippr/sf'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SEGMENT_OVERHEAD_BYTES } from '../src/disk.js'
import {
  type BatchInput,
  openWal,
  resolveWalSettings,
  slotName,
  type Wal,
  type WalBatch,
} from '../src/index.js'
import { diskWalIn } from './support/backend.js'
import { digested, encodeFrames, makeBatch, offsetK, SMALL_FILE_BYTES } from './support/batches.js'
import { filePositions } from './support/positions.js'

let dataDir: string
const opened: Wal[] = []

beforeEach(async () => {
  dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'skippr-wal-'))
})

afterEach(async () => {
  for (const wal of opened.splice(0)) await wal.close()
  await fsp.rm(dataDir, { recursive: true, force: true })
})

const positionsFile = () => path.join(dataDir, 'positions.json')

async function open(pipeline = 'bikehire', keepBatches = 0): Promise<Wal> {
  const positions = filePositions(positionsFile())
  const wal = await openWal({ pipeline, dataDir, bytesPerFile: SMALL_FILE_BYTES, positions, keepBatches })
  opened.push(wal)
  return wal
}

async function reopen(wal: Wal): Promise<Wal> {
  await wal.close()
  opened.splice(opened.indexOf(wal), 1)
  return open(wal.pipeline)
}

async function pendingOf(wal: Wal): Promise<WalBatch[]> {
  const out: WalBatch[] = []
  for await (const b of wal.pending()) out.push(b)
  return out
}

async function pendingOfAfter(wal: Wal, after: bigint): Promise<WalBatch[]> {
  const out: WalBatch[] = []
  for await (const b of wal.pending(after)) out.push(b)
  return out
}

const segmentFiles = async (pipeline = 'bikehire') =>
  (await fsp.readdir(path.join(dataDir, 'wal', slotName(pipeline)))).filter((n) => n.endsWith('.sfa'))

/**
 * Segment files that hold frames. The slot prepares its next segment in the background under a segment
 * name with a blank header, so a drained slot may show one file with no header yet.
 */
const segmentsWithData = async (pipeline = 'bikehire') => {
  const dir = path.join(dataDir, 'wal', slotName(pipeline))
  const withData: string[] = []
  for (const name of await segmentFiles(pipeline)) {
    const head = (await fsp.readFile(path.join(dir, name))).subarray(0, 32)
    if (head.some((byte) => byte !== 0)) withData.push(name)
  }
  return withData
}

describe('openWal (disk)', () => {
  it('returns committed batches from pending() byte-identical, in order, with stable identities', async () => {
    let wal = await open()
    const ids = []
    for (let k = 1; k <= 12; k++) ids.push(await wal.commit(makeBatch(k)))
    expect(ids.map((id) => id.pipeline)).toEqual(Array(12).fill('bikehire'))
    expect(new Set(ids.map((id) => id.epoch)).size).toBe(1)
    expect(ids.map((id) => id.seq)).toEqual([...ids.map((id) => id.seq)].sort((a, b) => (a < b ? -1 : 1)))

    wal = await reopen(wal)
    const pending = await pendingOf(wal)
    expect(pending.map((b) => b.id)).toEqual(ids)
    expect(pending.map(digested)).toEqual(Array.from({ length: 12 }, (_, i) => digested(makeBatch(i + 1))))
    expect(await wal.resumeOffset()).toEqual({ k: 12 })
  })

  it('makes WAL files sparse: a file takes on disk what its batches hold, not its whole size', async () => {
    const positions = filePositions(positionsFile())
    const fileBytes = 4 << 20
    const wal = await openWal({ pipeline: 'bikehire', dataDir, bytesPerFile: fileBytes, positions })
    opened.push(wal)
    const body = Buffer.alloc(100_000, 0x61)
    body[body.length - 1] = 10
    await wal.commit({
      offset: 'a',
      parts: [{ namespace: 'n', schemaVersion: 1, format: 'csv', rows: 1, body }],
    })
    const dir = path.join(dataDir, 'wal', slotName('bikehire'))
    for (const name of await segmentFiles()) {
      const { size, blocks } = await fsp.stat(path.join(dir, name))
      expect(size).toBe(fileBytes)
      expect(blocks * 512).toBeLessThan(1 << 20)
    }
  })

  it('commits a batch larger than a WAL file across several files, and reads it back whole', async () => {
    const wal = await open()
    const body = Buffer.alloc(5 * SMALL_FILE_BYTES + 123, 0x61)
    body[body.length - 1] = 10
    const big: BatchInput = {
      offset: 'big',
      parts: [{ namespace: 'n', schemaVersion: 1, format: 'csv', rows: 1, body }],
    }
    await wal.commit(makeBatch(1))
    const id = await wal.commit(big)
    expect((await segmentFiles()).length).toBeGreaterThanOrEqual(6)
    const [first, second] = await pendingOf(await reopen(wal))
    expect(digested(first!)).toEqual(digested(makeBatch(1)))
    expect(second!.id).toEqual(id)
    expect(Buffer.from(second!.parts[0]!.body).equals(body)).toBe(true)
  })

  it('with default settings, commits a batch that ran one source chunk past the threshold as one frame', async () => {
    const settings = resolveWalSettings({ env: {} })
    const positions = filePositions(positionsFile())
    const wal = await openWal({
      pipeline: 'bikehire',
      dataDir,
      bytesPerFile: settings.bytesPerFile,
      positions,
    })
    opened.push(wal)
    const body = Buffer.alloc(settings.bufferThresholdBytes + 1024 * 1024, 0x61)
    body[body.length - 1] = 10
    const id = await wal.commit({
      offset: 'o',
      parts: [{ namespace: 'n', schemaVersion: 1, format: 'csv', rows: 1, body }],
    })
    // FSNs count frames: a batch in two frames would end at FSN 2.
    expect(id.seq).toBe(1n)
    expect(await segmentsWithData()).toHaveLength(1)
  })

  it('lands batches in order, saving each offset before the watermark moves, and trims landed files', async () => {
    let wal = await open()
    const ids = []
    for (let k = 1; k <= 30; k++) ids.push(await wal.commit(makeBatch(k)))
    const filesBefore = (await segmentFiles()).length
    await expect(wal.markLanded(ids[1]!)).rejects.toMatchObject({ code: 'WAL_LAND_OUT_OF_ORDER' })
    for (const b of await pendingOf(wal)) {
      if (offsetK(b.offset) > 20) break
      await wal.markLanded(b.id)
    }
    expect(await filePositions(positionsFile()).load()).toEqual({ k: 20 })
    await wal.markLanded(ids[19]!) // landing again is a no-op
    expect((await segmentFiles()).length).toBeLessThan(filesBefore)

    wal = await reopen(wal)
    expect((await pendingOf(wal)).map((b) => offsetK(b.offset))).toEqual(range(21, 30))
    // markLanded works without a pending() pass first: it reads the oldest batch from the log.
    await expect(wal.markLanded(ids[21]!)).rejects.toMatchObject({ code: 'WAL_LAND_OUT_OF_ORDER' })
    await wal.markLanded(ids[20]!)
    expect((await pendingOf(wal)).map((b) => offsetK(b.offset))).toEqual(range(22, 30))
  })

  it('seals a WAL file that is not full after WAL_MAX_DELAY_SECONDS, so landed batches leave the disk', async () => {
    const landAll = async (wal: Wal) => {
      for (const b of await pendingOf(wal)) await wal.markLanded(b.id)
    }
    const positions = filePositions(positionsFile())
    const options = { dataDir, bytesPerFile: SMALL_FILE_BYTES, positions }
    const slow = await openWal({ ...options, pipeline: 'slow' }) // default: 60 s
    const quick = await openWal({ ...options, pipeline: 'quick', maxDelaySeconds: 0.05 })
    opened.push(slow, quick)
    for (const wal of [slow, quick]) await wal.commit(makeBatch(1))
    for (const wal of [slow, quick]) await landAll(wal)
    // Landed at once, but trimmed only once its timer has sealed the file.
    await expect.poll(() => segmentsWithData('quick'), { timeout: 10_000 }).toEqual([])
    expect(await segmentsWithData('slow')).toHaveLength(1) // still being written: kept
    // The next commit starts a new file and is read back as usual.
    await quick.commit(makeBatch(2))
    expect((await pendingOf(quick)).map((b) => offsetK(b.offset))).toEqual([2])
  })

  it('takes the resume offset from positions once every batch is landed and trimmed', async () => {
    let wal = await open()
    expect(await wal.resumeOffset()).toBeUndefined()
    for (let k = 1; k <= 5; k++) await wal.commit(makeBatch(k))
    for (const b of await pendingOf(wal)) await wal.markLanded(b.id)
    wal = await reopen(wal)
    expect(await segmentsWithData()).toEqual([])
    expect(await wal.resumeOffset()).toEqual({ k: 5 })
    // FSNs continue after a full drain, so identities stay unique within the epoch.
    const before = (await pendingOf(wal)).length
    const id = await wal.commit(makeBatch(6))
    expect(before).toBe(0)
    expect(id.seq).toBeGreaterThan(5n)
    expect(await wal.resumeOffset()).toEqual({ k: 6 })
  })

  it('discards a multi-frame batch cut short at the tail, and commits after it', async () => {
    let wal = await open()
    await wal.commit(makeBatch(1))
    const epoch = wal.epoch
    await wal.close()
    opened.splice(0)
    await appendTornCommit(epoch)

    wal = await open()
    expect(wal.epoch).toBe(epoch)
    expect(await wal.resumeOffset()).toEqual({ k: 1 })
    expect((await pendingOf(wal)).map((b) => b.offset)).toEqual([{ k: 1 }])
    await wal.commit(makeBatch(2))
    const pending = await pendingOf(await reopen(wal))
    expect(pending.map(digested)).toEqual([digested(makeBatch(1)), digested(makeBatch(2))])
  })

  it('hands kept batches over from memory, byte-identical, and reads the others from the log', async () => {
    const wal = await open('bikehire', 2)
    const ids = []
    for (let k = 1; k <= 6; k++) ids.push(await wal.commit(makeBatch(k)))
    const first = await pendingOf(wal)
    const again = await pendingOf(wal)
    expect(first.map((b) => b.id)).toEqual(ids)
    expect(first.map(digested)).toEqual(range(1, 6).map((k) => digested(makeBatch(k))))
    // Kept: the same object each time until landed. Read from the log: a fresh one per read.
    expect(first.map((b, i) => b === again[i])).toEqual([true, true, false, false, false, false])

    for (const b of first.slice(0, 3)) await wal.markLanded(b.id)
    // Room again: the next commits are kept, behind batches that are only on disk.
    ids.push(await wal.commit(makeBatch(7)), await wal.commit(makeBatch(8)), await wal.commit(makeBatch(9)))
    const later = await pendingOf(wal)
    expect(later.map((b) => b.id)).toEqual(ids.slice(3))
    expect(later.map(digested)).toEqual(range(4, 9).map((k) => digested(makeBatch(k))))
    const kept = (await pendingOf(wal)).map((b, i) => b === later[i])
    expect(kept).toEqual([false, false, false, true, true, false])
  })

  it('pending(after) goes on after a batch in hand, from memory or the log, and lands them in order', async () => {
    const wal = await open('bikehire', 1)
    const ids = []
    for (let k = 1; k <= 3; k++) ids.push(await wal.commit(makeBatch(k)))
    const inHand = await pendingOf(wal)
    ids.push(await wal.commit(makeBatch(4)), await wal.commit(makeBatch(5)))
    const rest = await pendingOfAfter(wal, inHand.at(-1)!.id.seq)
    expect(rest.map((b) => b.id)).toEqual(ids.slice(3))
    expect(rest.map(digested)).toEqual(range(4, 5).map((k) => digested(makeBatch(k))))
    // The batches read after ones not yet marked are marked in order, as any others.
    for (const b of [...inHand, ...rest]) await wal.markLanded(b.id)
    expect(await pendingOf(wal)).toEqual([])
    // After a batch that is landed already, it starts at the watermark.
    ids.push(await wal.commit(makeBatch(6)))
    expect((await pendingOfAfter(wal, ids[0]!.seq)).map((b) => b.id)).toEqual([ids[5]])
  })

  it('finds a kept batch behind the frames of a commit cut short', async () => {
    let wal = await open()
    await wal.commit(makeBatch(1))
    await wal.close()
    opened.splice(0)
    await appendTornCommit(wal.epoch)
    wal = await open('bikehire', 2)
    for (const b of await pendingOf(wal)) await wal.markLanded(b.id)
    const id = await wal.commit(makeBatch(2))
    const pending = await pendingOf(wal)
    expect(pending.map((b) => b.id)).toEqual([id])
    expect(pending.map(digested)).toEqual([digested(makeBatch(2))])
  })

  it('reset() deletes batches and the resume position and starts a new epoch', async () => {
    let wal = await open()
    const old = await wal.commit(makeBatch(1))
    await wal.commit(makeBatch(2))
    for (const b of await pendingOf(wal)) {
      await wal.markLanded(b.id)
      break
    }
    await wal.reset()
    expect(await pendingOf(wal)).toEqual([])
    expect(await wal.resumeOffset()).toBeUndefined()
    expect(await filePositions(positionsFile()).load()).toBeUndefined()
    const fresh = await wal.commit(makeBatch(3))
    expect(fresh.epoch).not.toBe(old.epoch)
    wal = await reopen(wal)
    expect((await pendingOf(wal)).map((b) => b.id)).toEqual([fresh])
    expect(await wal.resumeOffset()).toEqual({ k: 3 })
  })

  it('finishes a reset that a crash interrupted', async () => {
    let wal = await open()
    await wal.commit(makeBatch(1))
    const epoch = wal.epoch
    await filePositions(positionsFile()).save({ k: 0 })
    await wal.close()
    opened.splice(0)
    // A crash right after reset() marked the metadata leaves this file behind.
    const meta = path.join(dataDir, 'wal', 'bikehire.wal-meta')
    await fsp.writeFile(meta, JSON.stringify({ version: 1, epoch, resetting: true }))
    wal = await open()
    expect(await pendingOf(wal)).toEqual([])
    expect(await wal.resumeOffset()).toBeUndefined()
    expect(await filePositions(positionsFile()).load()).toBeUndefined()
    expect(wal.epoch).not.toBe(epoch)
    expect(JSON.parse(await fsp.readFile(meta, 'utf8'))).toEqual({
      version: 1,
      epoch: wal.epoch,
      resetting: false,
    })
  })

  it('mints a new epoch when the log starts again from FSN 1 (WAL directory lost)', async () => {
    let wal = await open()
    const before = await wal.commit(makeBatch(1))
    await wal.close()
    opened.splice(0)
    await fsp.rm(path.join(dataDir, 'wal', 'bikehire'), { recursive: true })
    wal = await open()
    const after = await wal.commit(makeBatch(1))
    expect(after.seq).toBe(before.seq)
    expect(after.epoch).not.toBe(before.epoch)
  })

  it('keeps pipelines apart under safely encoded names', async () => {
    const a = await open('orders/eu')
    const b = await open('..')
    await a.commit(makeBatch(1))
    await b.commit(makeBatch(2))
    expect(slotName('orders/eu')).toBe('orders.2Feu')
    expect(slotName('..')).toBe('.2E.2E')
    expect(slotName('my_pipe-2')).toBe('my_pipe-2')
    expect(slotName('vélo')).toBe('v.C3.A9lo')
    expect((await fsp.readdir(path.join(dataDir, 'wal'))).sort()).toEqual(
      [
        '.2E.2E',
        '.2E.2E.wal-meta',
        '.2E.2E.wal-reserve',
        'orders.2Feu',
        'orders.2Feu.wal-meta',
        'orders.2Feu.wal-reserve',
      ].sort(),
    )
    expect((await pendingOf(a)).map((x) => x.offset)).toEqual([{ k: 1 }])
    expect((await pendingOf(b)).map((x) => x.offset)).toEqual([{ k: 2 }])
  })

  it('keeps its log in the backend it is given, and opens it there again', async () => {
    const elsewhere = await fsp.mkdtemp(path.join(os.tmpdir(), 'skippr-wal-elsewhere-'))
    try {
      const backend = diskWalIn(elsewhere)
      const positions = filePositions(positionsFile())
      let wal = await openWal({ pipeline: 'p', dataDir, positions, backend })
      const id = await wal.commit(makeBatch(1))
      await wal.close()
      expect(await fsp.readdir(elsewhere)).toEqual(['wal'])
      expect(await fsp.readdir(dataDir)).not.toContain('wal')
      wal = await openWal({ pipeline: 'p', dataDir, positions, backend })
      expect((await pendingOf(wal)).map((b) => b.id)).toEqual([id])
      await wal.close()
    } finally {
      await fsp.rm(elsewhere, { recursive: true, force: true })
    }
  })

  it('keeps each batch commit time: the clock at commit, the same from memory, after reopen and on every replay', async () => {
    let wal = await open('bikehire', 1)
    const before = Date.now()
    await wal.commit(makeBatch(1))
    await new Promise((resolve) => setTimeout(resolve, 5))
    await wal.commit(makeBatch(2))
    const after = Date.now()
    const fromMemory = await pendingOf(wal)
    const times = fromMemory.map((b) => b.committedAt as number)
    expect(times[0]).toBeGreaterThanOrEqual(before)
    expect(times[1]).toBeGreaterThan(times[0] as number)
    expect(times[1]).toBeLessThanOrEqual(after)
    expect((await pendingOf(wal)).map((b) => b.committedAt)).toEqual(times)
    wal = await reopen(wal)
    expect((await pendingOf(wal)).map((b) => [b.id.seq, b.committedAt])).toEqual(
      fromMemory.map((b) => [b.id.seq, b.committedAt]),
    )
    await wal.markLanded(fromMemory[0]!.id)
    wal = await reopen(wal)
    expect((await pendingOf(wal)).map((b) => b.committedAt)).toEqual([times[1]])
  })

  it('reads a batch an older skipprd committed (format version 1), without a commit time, and commits after it', async () => {
    const wal = await open()
    const epoch = wal.epoch
    await wal.close()
    opened.splice(0)
    const slot = await openSlot({
      sfDir: path.join(dataDir, 'wal'),
      senderId: 'bikehire',
      maxSegmentBytes: SMALL_FILE_BYTES,
    })
    const old = makeBatch(3)
    // Version 2 without its commit time is version 1: the prefix's version byte and the 8 bytes after the epoch.
    const [frame] = encodeFrames(epoch, old, SMALL_FILE_BYTES)
    const v1 = Buffer.concat([frame!.subarray(0, 16 + 8), frame!.subarray(16 + 16)])
    v1[4] = 1
    v1.writeUInt32LE(frame!.readUInt32LE(12) - 8, 12)
    await slot.append([v1])
    await slot.close()
    const reopened = await open()
    await reopened.commit(makeBatch(4))
    const batches = await pendingOf(reopened)
    expect(batches.map((b) => [offsetK(b.offset), b.committedAt === undefined])).toEqual([
      [3, true],
      [4, false],
    ])
    expect(digested(batches[0]!)).toEqual(digested(old))
  })

  it('refuses use after close', async () => {
    const wal = await open()
    await wal.close()
    await expect(wal.commit(makeBatch(1))).rejects.toMatchObject({ code: 'WAL_CLOSED' })
  })
})

/** What a crash between two frames of one commit leaves: the first data frames, no batch frame. */
async function appendTornCommit(epoch: string): Promise<void> {
  const body = Buffer.alloc(3 * SMALL_FILE_BYTES, 0x62)
  body[body.length - 1] = 10
  const torn = {
    offset: 'torn',
    parts: [{ namespace: 'n', schemaVersion: 1, format: 'csv' as const, rows: 1, body }],
  }
  const frames = encodeFrames(epoch, torn, SMALL_FILE_BYTES - SEGMENT_OVERHEAD_BYTES)
  const slot = await openSlot({
    sfDir: path.join(dataDir, 'wal'),
    senderId: 'bikehire',
    maxSegmentBytes: SMALL_FILE_BYTES,
  })
  for (const frame of frames.slice(0, 2)) await slot.append(frame)
  await slot.close()
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i)
}
