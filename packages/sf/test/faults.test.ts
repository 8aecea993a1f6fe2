import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { IN_PLACE_BYTES } from '../src/group-commit.js'
import { IOV_MAX } from '../src/io.js'
import { openSlot } from '../src/slot.js'
import { errno, FaultyFs } from './support/faulty-fs.js'
import { appendAll, captureLogger, collect, payload, tmpSfDir } from './support/helpers.js'

const opts = { maxSegmentBytes: 4096, maxTotalBytes: 64 * 4096 }
// 37 frames of 108 bytes fill one 4096-byte segment.
const frames = (from: number, n: number) => Array.from({ length: n }, (_, i) => payload(from + i, 100))

async function contents(sfDir: string, options = opts): Promise<Buffer[]> {
  const slot = await openSlot({ sfDir, ...options, logger: captureLogger() })
  const out = (await collect(slot.replay())).map((f) => Buffer.from(f.payload))
  await slot.close()
  return out
}

/** Segments large enough for frames written from their payloads (IN_PLACE_BYTES and more). */
const roomy = { maxSegmentBytes: 256 * 1024, maxTotalBytes: 16 * 256 * 1024 }

/** Frames written from a copy, in place, and in pieces of both kinds. */
function mixedFrames(): Array<Buffer | Buffer[]> {
  return [
    payload(1, 100),
    payload(2, IN_PLACE_BYTES),
    [payload(3, 50), payload(4, 3 * IN_PLACE_BYTES), payload(5, 9)],
    payload(6, 300),
    Array.from({ length: 8 }, (_, i) => payload(100 + i, i % 2 ? 24 : IN_PLACE_BYTES + i)),
    payload(7, 5 * IN_PLACE_BYTES + 3),
  ]
}
const joined = (frames: Array<Buffer | Buffer[]>): Buffer[] =>
  frames.map((f) => (Array.isArray(f) ? Buffer.concat(f) : f))

/** Waits until the slot's directory holds `count` segment files under their final names. */
async function spareMade(sfDir: string, count: number): Promise<void> {
  const segments = async () => (await readdir(path.join(sfDir, 'default'))).filter((n) => n.endsWith('.sfa'))
  while ((await segments()).length < count) await new Promise((resolve) => setTimeout(resolve, 2))
}

describe('disk full and I/O faults', () => {
  it('ENOSPC while creating a segment fails those appends with SF_DISK_FULL; the slot carries on', async () => {
    const sfDir = await tmpSfDir()
    const io = new FaultyFs()
    const slot = await openSlot({ sfDir, ...opts, io, logger: captureLogger() })
    const first = frames(1, 30)
    await appendAll(slot, first)
    // The spare for segment 2 is made in the background after segment 1 starts; wait for it, as the
    // fault below refuses every new segment.
    await spareMade(sfDir, 2)
    // no space for new segments from now on (zero-filling one is a 4096-byte write)
    io.fault = (op, _file, w) => (op === 'write' && w?.length === 4096 ? errno('ENOSPC') : undefined)
    const fill = frames(31, 7 + 37) // 7 fit in segment 1, 37 fill the spare (segment 2), the rest needs segment 3
    const more = frames(75, 5)
    const results = await Promise.allSettled([...fill, ...more].map((p) => slot.append(p)))
    const failed = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[]
    expect(failed.length).toBe(5)
    for (const r of failed) expect(r.reason.code).toBe('SF_DISK_FULL')
    expect(failed[0]!.reason.message).toMatch(/no space left .* while creating a segment/)
    expect(slot.publishedFsn).toBe(74n)
    // space comes back: the same slot continues without a reopen
    io.fault = undefined
    expect(await slot.append(more[0]!)).toBe(75n)
    await slot.close()
    expect(await contents(sfDir)).toEqual([...first, ...fill, more[0]])
  })

  it('ENOSPC writing a frame stops the slot; reopening keeps every durable frame', async () => {
    const sfDir = await tmpSfDir()
    const io = new FaultyFs()
    const slot = await openSlot({ sfDir, ...opts, io, logger: captureLogger() })
    const durable = frames(1, 10)
    await appendAll(slot, durable)
    io.fault = (op, _file, w) => (op.startsWith('write') && w!.position > 32 ? errno('ENOSPC') : undefined)
    await expect(slot.append(payload(11))).rejects.toMatchObject({ code: 'SF_DISK_FULL' })
    await expect(slot.append(payload(12))).rejects.toMatchObject({ code: 'SF_SLOT_CLOSED' })
    await slot.close()
    expect(await contents(sfDir)).toEqual(durable)
  })

  it('a failed fdatasync stops the slot with SF_IO (its page cache can no longer be trusted)', async () => {
    const sfDir = await tmpSfDir()
    const io = new FaultyFs()
    const slot = await openSlot({ sfDir, ...opts, io, logger: captureLogger() })
    const durable = frames(1, 5)
    await appendAll(slot, durable)
    io.fault = (op) => (op === 'datasync' ? errno('EIO') : undefined)
    const err = await slot.append(payload(6)).catch((e) => e)
    expect(err.code).toBe('SF_IO')
    expect(err.cause.code).toBe('EIO')
    await expect(slot.append(payload(7))).rejects.toMatchObject({ code: 'SF_SLOT_CLOSED' })
    await slot.close()
    const after = await contents(sfDir)
    expect(after.slice(0, 5)).toEqual(durable)
    expect(after.length).toBeLessThanOrEqual(6) // the unsynced frame may or may not have reached the disk
  })

  it('short writes are completed, not mistaken for failures', async () => {
    const sfDir = await tmpSfDir()
    const io = new FaultyFs()
    io.maxWriteBytes = 7
    const slot = await openSlot({ sfDir, ...opts, io })
    const all = frames(1, 80)
    await appendAll(slot, all)
    await slot.ack(3n)
    await slot.close()
    expect(await contents(sfDir)).toEqual(all.slice(3))
  })

  it('a batch of more buffers than one writev takes is written in several, each within IOV_MAX', async () => {
    const sfDir = await tmpSfDir()
    const big = { maxSegmentBytes: 16 * 1024 * 1024, maxTotalBytes: 2 * 16 * 1024 * 1024 }
    const io = new FaultyFs()
    const calls: number[] = []
    io.fault = (op, _file, w) => {
      if (op === 'writev') calls.push(w!.buffers!.length)
      return undefined
    }
    const slot = await openSlot({ sfDir, ...big, io })
    // Each frame is two buffers (its header, then its payload in place): one batch of 1,200.
    const frames = Array.from({ length: 600 }, (_, i) => payload(i, IN_PLACE_BYTES))
    await appendAll(slot, frames)
    await slot.close()
    expect(calls).toEqual([IOV_MAX, 1200 - IOV_MAX])
    const back = await contents(sfDir, big)
    // Buffer#equals: a deep toEqual over megabytes is slow.
    expect(back.length === frames.length && back.every((b, i) => b.equals(frames[i]!))).toBe(true)
  })

  it('vectored writes cut short anywhere are continued', async () => {
    const sfDir = await tmpSfDir()
    const io = new FaultyFs()
    io.maxWriteBytes = 1000
    const slot = await openSlot({ sfDir, ...roomy, io })
    const frames = mixedFrames()
    await Promise.all(frames.map((f) => slot.append(f)))
    for (const f of frames) await slot.append(f) // one batch each
    await slot.close()
    expect(await contents(sfDir, roomy)).toEqual([...joined(frames), ...joined(frames)])
  })

  it.each([
    ['ENOSPC', 'SF_DISK_FULL'],
    ['EIO', 'SF_IO'],
  ])(
    '%s in the middle of a vectored write stops the slot; reopening keeps every durable frame',
    async (errorCode, code) => {
      const sfDir = await tmpSfDir()
      const io = new FaultyFs()
      const logger = captureLogger()
      const slot = await openSlot({ sfDir, ...roomy, io, logger })
      const durable = joined(mixedFrames())
      await appendAll(slot, durable)
      // The batch's first writev writes part of its bytes; the next one fails.
      io.maxWriteBytes = 5000
      let calls = 0
      io.fault = (op) => (op === 'writev' && calls++ > 0 ? errno(errorCode) : undefined)
      const failed = joined(mixedFrames())
      const results = await Promise.allSettled(failed.map((f) => slot.append(f)))
      expect(results.map((r) => r.status === 'rejected' && r.reason.code)).toEqual(failed.map(() => code))
      expect(calls).toBe(2)
      await expect(slot.append(payload(8))).rejects.toMatchObject({ code: 'SF_SLOT_CLOSED' })
      await slot.close()
      io.fault = undefined
      const reopened = await openSlot({ sfDir, ...roomy, logger: captureLogger() })
      const after = (await collect(reopened.replay())).map((f) => Buffer.from(f.payload))
      // Failed appends may or may not be there, never partially: the first writev ended inside a frame.
      expect(after.slice(0, durable.length)).toEqual(durable)
      expect(after.length).toBeLessThan(durable.length + failed.length)
      expect(after.slice(durable.length)).toEqual(failed.slice(0, after.length - durable.length))
      expect(reopened.stats().tornTailBytes).toBeGreaterThan(0)
      expect(await reopened.append(payload(9))).toBe(BigInt(after.length + 1))
      await reopened.close()
    },
  )

  it("a disk stall holding the slot's and the lock's calls past lockStaleMs / 2, nobody taking over: appends go on after it", async () => {
    const sfDir = await tmpSfDir()
    const io = new FaultyFs()
    const logger = captureLogger()
    const lock = { lockHeartbeatMs: 50, lockStaleMs: 1000 }
    const slot = await openSlot({ sfDir, ...opts, ...lock, io, logger })
    await appendAll(slot, frames(1, 5))
    const endStall = io.stall()
    const during = frames(6, 5).map((p) => slot.append(p)) // wait on the disk
    await new Promise((resolve) => setTimeout(resolve, lock.lockStaleMs))
    endStall()
    expect(await Promise.all(during)).toEqual([6n, 7n, 8n, 9n, 10n])
    expect(await appendAll(slot, frames(11, 5))).toEqual([11n, 12n, 13n, 14n, 15n])
    await slot.close()
    expect(logger.text('error')).toBe('')
    expect(await contents(sfDir)).toEqual(frames(1, 15))
  })

  it('ENOSPC writing the watermark gives back the spare segment and retries', async () => {
    const sfDir = await tmpSfDir()
    const io = new FaultyFs()
    const slot = await openSlot({ sfDir, ...opts, io })
    await appendAll(slot, frames(1, 50))
    let refused = 0
    io.fault = (op, file) => {
      if (op === 'write' && file.endsWith('.ack-watermark.tmp') && refused++ === 0) return errno('ENOSPC')
      return undefined
    }
    await slot.ack(40n)
    expect(refused).toBe(2)
    expect(await readdir(path.join(sfDir, 'default'))).not.toContain('sf-0000000000000001.sfa')
    await slot.close()
    expect((await contents(sfDir)).length).toBe(10)
  })
})
