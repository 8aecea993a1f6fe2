/**
 * WAL_MAX_TOTAL_BYTES and a full disk: a commit at the cap waits for markLanded() to free room (or fails
 * where nothing could), and a commit that would leave landing too little room on the device fails with
 * WAL_DISK_FULL before it writes. Real files in a temporary directory; the cap is two 64 KiB WAL files.
 */
import * as fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type BatchInput, openWal, slotName, type Wal, type WalOptions } from '../src/index.js'
import { RESERVE_BYTES } from '../src/room.js'
import { SMALL_FILE_BYTES } from './support/batches.js'
import { filePositions } from './support/positions.js'

let dataDir: string
const opened: Wal[] = []

beforeEach(async () => {
  dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'skippr-wal-cap-'))
})

afterEach(async () => {
  for (const wal of opened.splice(0)) await wal.close()
  await fsp.rm(dataDir, { recursive: true, force: true })
})

async function open(options: Partial<WalOptions> = {}): Promise<Wal> {
  const wal = await openWal({
    pipeline: 'bikehire',
    dataDir,
    bytesPerFile: SMALL_FILE_BYTES,
    maxTotalBytes: 2 * SMALL_FILE_BYTES,
    positions: filePositions(path.join(dataDir, 'positions.json')),
    ...options,
  })
  opened.push(wal)
  return wal
}

async function reopen(wal: Wal, options: Partial<WalOptions> = {}): Promise<Wal> {
  await wal.close()
  opened.splice(opened.indexOf(wal), 1)
  return open(options)
}

/** Batch k: one CSV part of `bytes` bytes. Two 40 kB batches do not share a 64 KiB WAL file. */
function batch(k: number, bytes = 40_000): BatchInput {
  const body = Buffer.alloc(bytes, 'a')
  body[bytes - 1] = 0x0a
  return { offset: { k }, parts: [{ namespace: 'rentals', schemaVersion: 1, format: 'csv', rows: 1, body }] }
}

async function pendingOffsets(wal: Wal): Promise<unknown[]> {
  const out: unknown[] = []
  for await (const b of wal.pending()) out.push(b.offset)
  return out
}

/** A commit's outcome so far, without waiting for it. */
function track<T>(promise: Promise<T>): { readonly settled: () => boolean } {
  let settled = false
  promise.then(
    () => (settled = true),
    () => (settled = true),
  )
  return { settled: () => settled }
}

const reserveFile = () => path.join(dataDir, 'wal', `${slotName('bikehire')}.wal-reserve`)

describe('WAL_MAX_TOTAL_BYTES', () => {
  it('makes a commit at the cap wait, and lets it go on once markLanded frees room', async () => {
    const wal = await open()
    const first = await wal.commit(batch(1))
    await wal.commit(batch(2))
    let full!: () => void
    const reachedCap = new Promise<void>((resolve) => (full = resolve))
    const third = wal.commit(batch(3), { onFull: () => full() })
    const state = track(third)
    await reachedCap
    expect(state.settled()).toBe(false)
    // The source position stays behind the batch that waits.
    expect(await wal.resumeOffset()).toEqual({ k: 2 })
    expect(await pendingOffsets(wal)).toEqual([{ k: 1 }, { k: 2 }])

    await wal.markLanded(first)
    const id = await third
    expect(id.seq).toBeGreaterThan(first.seq)
    expect(await wal.resumeOffset()).toEqual({ k: 3 })
    expect(await pendingOffsets(wal)).toEqual([{ k: 2 }, { k: 3 }])
    expect(wal.landedBatches).toBe(1)
  })

  it("ends a wait at the cap with the signal's reason, committing nothing, and stays usable", async () => {
    const wal = await open()
    const first = await wal.commit(batch(1))
    await wal.commit(batch(2))
    const stop = new AbortController()
    const reason = new Error('stopped by SIGTERM')
    const third = wal.commit(batch(3), { signal: stop.signal, onFull: () => stop.abort(reason) })
    await expect(third).rejects.toBe(reason)
    expect(await wal.resumeOffset()).toEqual({ k: 2 })
    expect(await pendingOffsets(wal)).toEqual([{ k: 1 }, { k: 2 }])

    await wal.markLanded(first)
    await wal.commit(batch(4))
    expect(await pendingOffsets(wal)).toEqual([{ k: 2 }, { k: 4 }])
  })

  it('ends a wait at the cap with WAL_CLOSED when the WAL is closed', async () => {
    const wal = await open()
    await wal.commit(batch(1))
    await wal.commit(batch(2))
    let full!: () => void
    const reachedCap = new Promise<void>((resolve) => (full = resolve))
    const third = wal.commit(batch(3), { onFull: () => full() })
    third.catch(() => {})
    await reachedCap
    await wal.close()
    await expect(third).rejects.toMatchObject({ code: 'WAL_CLOSED' })
  })

  it("fails at the cap with WAL_FULL, naming the WAL's directory and the fix, when nothing lands", async () => {
    const wal = await open({ whenFull: 'fail' })
    await wal.commit(batch(1))
    await wal.commit(batch(2))
    const error = await wal.commit(batch(3)).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'WAL_FULL' })
    const message = (error as Error).message
    expect(message).toContain(path.join(dataDir, 'wal', 'bikehire'))
    expect(message).toContain('WAL_MAX_TOTAL_BYTES (128 KiB)')
    expect(message).toContain('give the pipeline a data_sink')
    expect(message).not.toContain('\n')
    expect(await wal.resumeOffset()).toEqual({ k: 2 })
    const reopened = await reopen(wal)
    expect(await reopened.resumeOffset()).toEqual({ k: 2 })
    expect(await pendingOffsets(reopened)).toEqual([{ k: 1 }, { k: 2 }])
  })

  it('fails with WAL_FULL for a batch larger than the cap, then takes a batch that fits', async () => {
    const wal = await open()
    const error = await wal.commit(batch(1, 3 * SMALL_FILE_BYTES)).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'WAL_FULL' })
    expect((error as Error).message).toContain('does not fit even with every batch landed')
    expect((error as Error).message).toContain('lower BUFFER_THRESHOLD_BYTES')
    expect(await wal.resumeOffset()).toBeUndefined()
    // The frames of the batch cut short fill the cap: the next commit acks them out of its way.
    await wal.commit(batch(2))
    await wal.commit(batch(3))
    expect(await pendingOffsets(wal)).toEqual([{ k: 2 }, { k: 3 }])
  })
})

describe('a full disk', () => {
  it('fails a commit that would leave landing too little room with WAL_DISK_FULL, before it writes', async () => {
    let wal = await open()
    await wal.commit(batch(1))
    wal = await reopen(wal, { keepFreeBytes: Number.MAX_SAFE_INTEGER })
    const error = await wal.commit(batch(2)).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'WAL_DISK_FULL', dataDir })
    const message = (error as Error).message
    expect(message).toContain(`pipeline 'bikehire': the disk holding ${dataDir} is full: `)
    expect(message).toContain('kept free for landing')
    expect(message).toContain('run sync again')
    expect(message).not.toContain('\n')
    expect(await wal.resumeOffset()).toEqual({ k: 1 })
    expect(await pendingOffsets(wal)).toEqual([{ k: 1 }])
    // Landing still works, and a reopened WAL holds exactly what was committed.
    const [pending] = await collect(wal)
    await wal.markLanded(pending!)
    wal = await reopen(wal)
    expect(await wal.resumeOffset()).toEqual({ k: 1 })
    expect(await pendingOffsets(wal)).toEqual([])
  })

  it('keeps a reserve beside the WAL, and gives it back when the disk is full', async () => {
    let wal = await open()
    expect((await fsp.stat(reserveFile())).size).toBe(RESERVE_BYTES)
    // Opening on a nearly full disk gives the reserve back first, so the slot can write its lock.
    wal = await reopen(wal, { keepFreeBytes: Number.MAX_SAFE_INTEGER })
    await expect(fsp.stat(reserveFile())).rejects.toMatchObject({ code: 'ENOENT' })
    // A reserve that exists when a commit finds the disk full is given back too.
    await fsp.writeFile(reserveFile(), Buffer.alloc(RESERVE_BYTES))
    await expect(wal.commit(batch(1))).rejects.toMatchObject({ code: 'WAL_DISK_FULL' })
    await expect(fsp.stat(reserveFile())).rejects.toMatchObject({ code: 'ENOENT' })
    // With room again, the next open makes it again.
    await reopen(wal)
    expect((await fsp.stat(reserveFile())).size).toBe(RESERVE_BYTES)
  })
})

async function collect(wal: Wal) {
  const ids = []
  for await (const b of wal.pending()) ids.push(b.id)
  return ids
}
