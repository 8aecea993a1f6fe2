/**
 * The lock-free snapshot reader, against a WAL a writer holds open: in this process, and in a child
 * process that commits, lands (so files are trimmed under the reader) and reopens the WAL while this
 * process takes snapshot after snapshot. SKIPPR_WAL_SNAPSHOT_MS sets how long the concurrent test runs.
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import * as fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openWal, openWalSnapshot, slotName, type Wal, type WalBatch } from '../src/index.js'
import { diskWalIn } from './support/backend.js'
import { makeBatch, offsetK, SMALL_FILE_BYTES } from './support/batches.js'
import { filePositions } from './support/positions.js'

const CONCURRENT_MS = Number(process.env.SKIPPR_WAL_SNAPSHOT_MS ?? 3000)
const CHILD = fileURLToPath(new URL('./fixtures/crash-child.ts', import.meta.url))

let dataDir: string
const opened: Wal[] = []

beforeEach(async () => {
  dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'skippr-wal-snap-'))
})

afterEach(async () => {
  for (const wal of opened.splice(0)) await wal.close()
  await fsp.rm(dataDir, { recursive: true, force: true })
})

async function open(pipeline = 'bikehire'): Promise<Wal> {
  const wal = await openWal({
    pipeline,
    dataDir,
    bytesPerFile: SMALL_FILE_BYTES,
    positions: filePositions(path.join(dataDir, `${pipeline}.positions`)),
  })
  opened.push(wal)
  return wal
}

async function snapshotOf(pipeline = 'bikehire', dir = dataDir): Promise<WalBatch[]> {
  const snapshot = await openWalSnapshot({ pipeline, dataDir: dir })
  const out: WalBatch[] = []
  for await (const batch of snapshot.batches()) out.push(batch)
  return out
}

const digest = (body: Uint8Array) => createHash('sha256').update(body).digest('hex')
const plain = (b: Pick<WalBatch, 'offset' | 'parts'>) => ({
  offset: b.offset,
  parts: b.parts.map((p) => ({ ...p, body: digest(p.body) })),
})
const ks = (batches: readonly WalBatch[]) => batches.map((b) => offsetK(b.offset))
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

describe('openWalSnapshot', () => {
  it('reads nothing from a pipeline that has no WAL yet', async () => {
    expect(await snapshotOf('never-synced')).toEqual([])
  })

  it('sees the committed batches while the writer holds the WAL, with the same identities and bytes', async () => {
    const wal = await open()
    const ids = []
    for (let k = 1; k <= 20; k++) ids.push(await wal.commit(makeBatch(k)))
    const seen = await snapshotOf()
    expect(seen.map((b) => b.id)).toEqual(ids)
    expect(seen.map(plain)).toEqual(range(1, 20).map((k) => plain(makeBatch(k))))
    // The writer is undisturbed: it commits and reads on.
    await wal.commit(makeBatch(21))
    expect(ks(await snapshotOf())).toEqual(range(1, 21))
  })

  it('leaves out landed batches, including those whose files were trimmed', async () => {
    const wal = await open()
    for (let k = 1; k <= 30; k++) await wal.commit(makeBatch(k))
    for await (const b of wal.pending()) {
      if (offsetK(b.offset) > 18) break
      await wal.markLanded(b.id)
    }
    const snapshot = await openWalSnapshot({ pipeline: 'bikehire', dataDir })
    expect(snapshot.landedSeq).toBeGreaterThan(0n)
    const seen: WalBatch[] = []
    for await (const b of snapshot.batches()) seen.push(b)
    expect(ks(seen)).toEqual(range(19, 30))
    expect(seen[0]!.id.seq).toBeGreaterThan(snapshot.landedSeq)
  })

  it('reports the epoch of the batches it holds; after a reset, a new epoch and nothing pending', async () => {
    const wal = await open()
    for (let k = 1; k <= 3; k++) await wal.commit(makeBatch(k))
    const before = await openWalSnapshot({ pipeline: 'bikehire', dataDir })
    expect(before.epoch).toBe(wal.epoch)
    await before.close()
    await wal.reset()
    const after = await openWalSnapshot({ pipeline: 'bikehire', dataDir })
    expect(after.epoch).toBe(wal.epoch)
    expect(after.epoch).not.toBe(before.epoch)
    const seen: WalBatch[] = []
    for await (const b of after.batches()) seen.push(b)
    expect(seen).toEqual([])
  })

  it('reads through the backend it is given', async () => {
    const elsewhere = await fsp.mkdtemp(path.join(os.tmpdir(), 'skippr-wal-snap-elsewhere-'))
    try {
      const backend = diskWalIn(elsewhere)
      const positions = filePositions(path.join(dataDir, 'positions'))
      const wal = await openWal({ pipeline: 'bikehire', dataDir, positions, backend })
      const id = await wal.commit(makeBatch(1))
      const snapshot = await openWalSnapshot({ pipeline: 'bikehire', dataDir, backend })
      expect(snapshot.epoch).toBe(wal.epoch)
      const seen: WalBatch[] = []
      for await (const b of snapshot.batches()) seen.push(b)
      expect(seen.map((b) => b.id)).toEqual([id])
      // The default backend looks in dataDir, where this WAL is not.
      expect(await snapshotOf()).toEqual([])
      await wal.close()
    } finally {
      await fsp.rm(elsewhere, { recursive: true, force: true })
    }
  })

  it('continues after a batch an earlier snapshot returned, stepping over the log before it', async () => {
    const wal = await open()
    for (let k = 1; k <= 12; k++) await wal.commit(makeBatch(k))
    const first = await snapshotOf()
    const sixth = first[5]!.id.seq
    const rest = await openWalSnapshot({ pipeline: 'bikehire', dataDir })
    const seen: WalBatch[] = []
    for await (const b of rest.batches(sixth)) seen.push(b)
    expect(seen.map(plain)).toEqual(first.slice(6).map(plain))
    expect(ks(seen)).toEqual(range(7, 12))
  })

  it('stops before a torn tail, as recovery would', async () => {
    const wal = await open()
    for (let k = 1; k <= 3; k++) await wal.commit(makeBatch(k))
    await wal.close()
    opened.splice(0)
    const slot = path.join(dataDir, 'wal', slotName('bikehire'))
    const last = (await fsp.readdir(slot))
      .filter((n) => n.endsWith('.sfa'))
      .sort()
      .at(-1)!
    const file = path.join(slot, last)
    const bytes = await fsp.readFile(file)
    // Where the next append would start: scribble a frame header there whose payload never arrived.
    const end = dataEnd(bytes)
    const handle = await fsp.open(file, 'r+')
    await handle.write(Buffer.from([0x13, 0, 0, 0, 0xff, 0, 0, 0, 1, 2, 3]), 0, 11, end)
    await handle.close()
    expect(ks(await snapshotOf())).toEqual([1, 2, 3])
  })

  it('never shows part of a batch, a batch out of order or an uncommitted one while a child commits, lands and trims', async () => {
    const journal = path.join(dataDir, 'journal')
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        CHILD,
        dataDir,
        path.join(dataDir, 'positions.json'),
        journal,
        String(Date.now() >>> 0),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    )
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    try {
      await waitFor(() => readJournal(journal).ready !== undefined)
      let snapshots = 0
      let nonEmpty = 0
      const deadline = Date.now() + CONCURRENT_MS
      while (Date.now() < deadline) {
        const before = readJournal(journal)
        const seen = await snapshotOf('crash')
        const after = readJournal(journal)
        const got = ks(seen)
        const state = `snapshot ${got.join(',') || 'empty'}; journal before ${JSON.stringify(before)} after ${JSON.stringify(after)}; stderr ${stderr}`
        snapshots++
        if (got.length === 0) {
          // Everything committed before the snapshot had at least begun landing by its end.
          expect(after.lb, state).toBeGreaterThanOrEqual(before.cd)
          continue
        }
        nonEmpty++
        const first = got[0]!
        // In order, and gapless but for batches that landed while it read: a WAL file trimmed and
        // reused under the reader is stepped over (snapshot-reader.ts, `landedSeq`).
        const missing = range(first, got.at(-1)!).filter((k) => !got.includes(k))
        expect(got, state).toEqual([...got].sort((a, b) => a - b))
        expect(
          missing.filter((k) => k > after.lb),
          state,
        ).toEqual([])
        expect(seen.map(plain), state).toEqual(got.map((k) => plain(makeBatch(k))))
        // Nothing that was not at least being committed; nothing committed before it is missing.
        expect(got.at(-1)!, state).toBeLessThanOrEqual(after.cb)
        expect(got.at(-1)!, state).toBeGreaterThanOrEqual(before.cd)
        // What precedes the snapshot had at least begun landing.
        expect(after.lb, state).toBeGreaterThanOrEqual(first - 1)
      }
      expect(snapshots).toBeGreaterThan(5)
      expect(nonEmpty).toBeGreaterThan(0)
      expect(child.exitCode, stderr).toBeNull()
    } finally {
      child.kill('SIGKILL')
    }
  })
})

/** Offset after a segment's last frame: frames are [crc u32][length u32][payload] after a 32-byte header. */
function dataEnd(bytes: Buffer): number {
  let at = 32
  while (at + 8 <= bytes.length && bytes.readUInt32LE(at + 4) > 0) at += 8 + bytes.readUInt32LE(at + 4)
  return at
}

interface Journal {
  ready: number | undefined
  cb: number
  cd: number
  lb: number
  ld: number
}

function readJournal(file: string): Journal {
  const j: Journal = { ready: undefined, cb: 0, cd: 0, lb: 0, ld: 0 }
  let text = ''
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return j
  }
  for (const line of text.split('\n')) {
    const [event, value] = line.split(' ')
    const n = Number(value)
    if (event === 'ready' || event === 'reopened') j.ready ??= n
    else if (event === 'cb' || event === 'cd' || event === 'lb' || event === 'ld')
      j[event] = Math.max(j[event], n)
  }
  return j
}

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the child')
    await sleep(20)
  }
}
