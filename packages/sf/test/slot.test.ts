import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { IN_PLACE_BYTES } from '../src/group-commit.js'
import { openSlot } from '../src/slot.js'
import { FaultyFs } from './support/faulty-fs.js'
import { appendAll, captureLogger, collect, crashCopy, payload, tmpSfDir } from './support/helpers.js'

const small = { maxSegmentBytes: 4096, maxTotalBytes: 64 * 4096 }

describe('openSlot: append, replay, ack, reopen', () => {
  it('numbers frames from 1 and replays them byte-identical in order', async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, ...small })
    const payloads = Array.from({ length: 200 }, (_, i) => payload(i, 50 + (i % 7) * 30))
    const fsns = await appendAll(slot, payloads)
    expect(fsns).toEqual(payloads.map((_, i) => BigInt(i + 1)))
    expect(slot.publishedFsn).toBe(200n)
    const frames = await collect(slot.replay())
    expect(frames.map((f) => f.fsn)).toEqual(fsns)
    for (const [i, f] of frames.entries()) expect(Buffer.from(f.payload)).toEqual(payloads[i])
    expect((await collect(slot.replay(150n))).map((f) => f.fsn)).toEqual(fsns.slice(149))
    await slot.close()
  })

  it('rotates into sf-<gen>.sfa files of exactly maxSegmentBytes', async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, ...small })
    await appendAll(
      slot,
      Array.from({ length: 100 }, (_, i) => payload(i, 200)),
    )
    const names = (await readdir(path.join(sfDir, 'default'))).filter((n) => n.endsWith('.sfa')).sort()
    expect(names.length).toBeGreaterThanOrEqual(5)
    expect(names[0]).toBe('sf-0000000000000001.sfa')
    for (const n of names) expect((await stat(path.join(sfDir, 'default', n))).size).toBe(4096)
    // every segment, and maybe the zero-filled spare already named as the next segment
    expect(names.length - slot.stats().segments).toBeGreaterThanOrEqual(0)
    expect(names.length - slot.stats().segments).toBeLessThanOrEqual(1)
    await slot.close()
  })

  it('reopens with every frame, continues the FSNs and acked state', async () => {
    const sfDir = await tmpSfDir()
    let slot = await openSlot({ sfDir, ...small })
    const payloads = Array.from({ length: 120 }, (_, i) => payload(i, 150))
    await appendAll(slot, payloads)
    await slot.ack(40n)
    await slot.close()
    slot = await openSlot({ sfDir, ...small })
    expect(slot.publishedFsn).toBe(120n)
    expect(slot.ackedFsn).toBe(40n)
    const frames = await collect(slot.replay())
    expect(frames.map((f) => f.fsn)).toEqual(Array.from({ length: 80 }, (_, i) => BigInt(i + 41)))
    for (const f of frames) expect(Buffer.from(f.payload)).toEqual(payloads[Number(f.fsn) - 1])
    expect(await slot.append(payload(999))).toBe(121n)
    await slot.close()
  })

  it('ack persists the watermark and deletes fully acked segments only', async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, ...small })
    await appendAll(
      slot,
      Array.from({ length: 100 }, (_, i) => payload(i, 200)),
    )
    const before = slot.stats().segments
    await slot.ack(50n)
    const after = slot.stats().segments
    expect(after).toBeLessThan(before)
    const wm = await readFile(path.join(sfDir, 'default', '.ack-watermark'))
    expect(wm.length).toBe(16)
    expect(wm.readBigUInt64LE(8)).toBe(50n)
    // frames above the ack are still all there
    expect((await collect(slot.replay())).map((f) => f.fsn)).toEqual(
      Array.from({ length: 50 }, (_, i) => BigInt(i + 51)),
    )
    await slot.close()
  })

  it('makes the next spare only once the batch that took the last one is durable, not during its sync', async () => {
    const sfDir = await tmpSfDir()
    const io = new FaultyFs()
    const ops: string[] = []
    io.fault = (op, file) => {
      ops.push(`${op} ${path.basename(file)}`)
      return undefined
    }
    const slot = await openSlot({ sfDir, maxSegmentBytes: 4096, maxTotalBytes: 8 * 4096, io })
    // One batch: it starts segment 1 from the spare made at open.
    await appendAll(
      slot,
      Array.from({ length: 10 }, (_, i) => payload(i, 100)),
    )
    const nextSpare = 'open sf-0000000000000002.sfa.tmp'
    for (let i = 0; i < 100 && !ops.includes(nextSpare); i++) await new Promise((r) => setTimeout(r, 10))
    // The handle keeps the name segment 1's file was opened under, before its rename.
    const batchWrite = ops.indexOf('writev sf-0000000000000001.sfa.tmp')
    const batchSync = ops.indexOf('datasync sf-0000000000000001.sfa.tmp', batchWrite)
    expect(batchWrite).toBeGreaterThan(-1)
    expect(batchSync).toBeGreaterThan(batchWrite)
    expect(ops.indexOf(nextSpare)).toBeGreaterThan(batchSync)
    await slot.close()
  })

  it('recycles a trimmed segment as the next spare: same blocks, header blanked, renamed', async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, maxSegmentBytes: 4096, maxTotalBytes: 2 * 4096 })
    const dir = path.join(sfDir, 'default')
    await appendAll(
      slot,
      Array.from({ length: 40 }, (_, i) => payload(i, 100)),
    ) // 37 fill segment 1
    expect(slot.stats().segments).toBe(2) // no room left for a spare
    const inode = (await stat(path.join(dir, 'sf-0000000000000001.sfa'))).ino
    await slot.ack(37n)
    // its header blanked in the background, then named as the next segment; its old frames stay
    const spare = path.join(dir, 'sf-0000000000000003.sfa')
    for (let i = 0; i < 100 && !(await stat(spare).catch(() => undefined)); i++) {
      await new Promise((r) => setTimeout(r, 50))
    }
    expect((await stat(spare)).ino).toBe(inode)
    const bytes = await readFile(spare)
    expect(bytes.subarray(0, 32).every((b) => b === 0)).toBe(true)
    expect(bytes.subarray(32).some((b) => b !== 0)).toBe(true)
    await appendAll(
      slot,
      Array.from({ length: 37 }, (_, i) => payload(100 + i, 100)),
    )
    expect(slot.stats().segments).toBe(2)
    const frames = await collect(slot.replay())
    expect(frames.map((f) => f.fsn)).toEqual(Array.from({ length: 40 }, (_, i) => BigInt(38 + i)))
    expect(Buffer.from(frames.at(-1)!.payload)).toEqual(payload(136, 100))
    await slot.close()
  })

  it("after a crash, a reused file's old frames never pass for new ones, even at the same offsets", async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, maxSegmentBytes: 4096, maxTotalBytes: 2 * 4096 })
    const dir = path.join(sfDir, 'default')
    const frames = Array.from({ length: 76 }, (_, i) => payload(1000 + i, 100)) // all 108 bytes on disk
    await appendAll(slot, frames.slice(0, 40)) // 37 in segment 1, 3 in segment 2
    await slot.ack(37n) // segment 1's file becomes the spare, its 37 frames left in place
    await appendAll(slot, frames.slice(40)) // fills segment 2, then 2 frames over the old file's first 2
    const reusedFrom = await readFile(path.join(dir, 'sf-0000000000000003.sfa'))
    expect(reusedFrom.subarray(32 + 2 * 108, 32 + 3 * 108).some((b) => b !== 0)).toBe(true) // old frame 3
    // A crash now: copy the durable files while the slot still runs, and open the copy.
    const crashed = await crashCopy(dir)
    const logger = captureLogger()
    const after = await openSlot({ sfDir: crashed, maxSegmentBytes: 4096, maxTotalBytes: 2 * 4096, logger })
    const replayed = await collect(after.replay())
    expect(replayed.map((f) => f.fsn)).toEqual(Array.from({ length: 39 }, (_, i) => BigInt(38 + i)))
    expect(replayed.map((f) => Buffer.from(f.payload))).toEqual(frames.slice(37))
    expect(after.stats()).toMatchObject({ tornTailBytes: 0, dataLoss: [] })
    expect(logger.text('error')).toBe('')
    await after.close()
    await slot.close()
  })

  it("writes payload pieces of IN_PLACE_BYTES or more from the caller's buffers, copies the rest, in one writev", async () => {
    const sfDir = await tmpSfDir()
    const options = { sfDir, maxSegmentBytes: 256 * 1024, maxTotalBytes: 8 * 256 * 1024 }
    const io = new FaultyFs()
    const writevs: Array<readonly Uint8Array[]> = []
    io.fault = (op, _file, w) => {
      if (op === 'writev') writevs.push(w!.buffers!)
      return undefined
    }
    const slot = await openSlot({ ...options, io })
    const below = payload(1, IN_PLACE_BYTES - 1)
    const atThreshold = payload(2, IN_PLACE_BYTES)
    const short = payload(3, 100)
    const [head, body, tail] = [payload(4, 10), payload(5, 3 * IN_PLACE_BYTES), payload(6, 7)]
    await Promise.all(
      [below, atThreshold, short, [head, body, Buffer.alloc(0), tail]].map((p) => slot.append(p)),
    )
    expect(writevs).toHaveLength(1)
    const written = writevs[0]!
    const sameBuffer = (p: Uint8Array) => written.some((b) => b.buffer === p.buffer)
    const whole = (p: Uint8Array) =>
      written.some((b) => b.buffer === p.buffer && b.byteOffset === p.byteOffset && b.length === p.length)
    expect([atThreshold, body].map(whole)).toEqual([true, true])
    expect([below, short, head, tail].map(sameBuffer)).toEqual([false, false, false, false])
    await slot.close()
    const reopened = await openSlot(options)
    const frames = (await collect(reopened.replay())).map((f) => Buffer.from(f.payload))
    expect(frames).toEqual([below, atThreshold, short, Buffer.concat([head, body, tail])])
    await reopened.close()
  })

  it('writes large frames straight from their payloads, alone, in pieces, and in batches across segments', async () => {
    const sfDir = await tmpSfDir()
    const MiB = 1024 * 1024
    const options = { sfDir, maxSegmentBytes: 4 * MiB, maxTotalBytes: 64 * MiB }
    const slot = await openSlot(options)
    const large = Array.from({ length: 7 }, (_, i) => payload(i, 1.1 * MiB + i)) // one per batch: 3 per segment
    for (const p of large) await slot.append(p)
    // In pieces, as the WAL appends: header and body views written back to back.
    const pieces = [payload(50, 100), payload(51, MiB), payload(52, 7)]
    await slot.append(pieces)
    const many = Array.from({ length: 5 }, (_, i) => payload(100 + i, 1.1 * MiB)) // one batch, across segments
    await Promise.all(many.map((p) => slot.append(p)))
    await slot.close()
    const reopened = await openSlot(options)
    const frames = await collect(reopened.replay())
    const expected = [...large, Buffer.concat(pieces), ...many]
    expect(frames).toHaveLength(expected.length)
    // Buffer#equals: a deep toEqual over megabytes is slow.
    expect(frames.map((f, i) => Buffer.from(f.payload).equals(expected[i]!))).toEqual(
      expected.map(() => true),
    )
    expect(reopened.stats()).toMatchObject({ tornTailBytes: 0, dataLoss: [] })
    await reopened.close()
  })

  it('seal() ends a part-full segment, so its frames can be trimmed once acked', async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, ...small })
    const dir = path.join(sfDir, 'default')
    await appendAll(slot, [payload(1, 100), payload(2, 100)])
    const sealing = slot.seal()
    const late = slot.append(payload(3, 100)) // queued after the seal: starts the next segment
    await sealing
    expect(await late).toBe(3n)
    await slot.seal()
    await slot.seal() // nothing written since: no empty segment
    expect(slot.stats().segments).toBe(2)
    const first = await readFile(path.join(dir, 'sf-0000000000000001.sfa'))
    expect(first.subarray(4096 - 32, 4096 - 28).toString('latin1')).toBe('SKSL')
    await slot.ack(2n)
    expect(slot.stats().segments).toBe(1)
    expect(await readdir(dir)).not.toContain('sf-0000000000000001.sfa')
    await slot.ack(3n)
    expect(slot.stats().segments).toBe(0)
    await slot.close()
    // A sealed last segment is never appended to after a reopen either.
    const again = await openSlot({ sfDir, ...small })
    expect(await again.append(payload(4, 100))).toBe(4n)
    await again.seal()
    await again.close()
    const reopened = await openSlot({ sfDir, ...small })
    expect(await reopened.append(payload(5, 100))).toBe(5n)
    expect((await collect(reopened.replay())).map((f) => f.fsn)).toEqual([4n, 5n])
    expect(reopened.stats().segments).toBe(2)
    await reopened.close()
  })

  it('keeps up to 8 trimmed segment files for reuse as spares; close deletes them', async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, ...small })
    const dir = path.join(sfDir, 'default')
    const names = async (suffix: string) => (await readdir(dir)).filter((n) => n.endsWith(suffix)).sort()
    await appendAll(
      slot,
      Array.from({ length: 37 * 12 }, (_, i) => payload(i, 100)),
    ) // 12 full segments
    await slot.ack(37n * 11n) // trims 11
    // The first 8 trimmed are kept; a new spare may also be in preparation as `sf-<gen>.sfa.tmp`.
    const trimmed = Array.from(
      { length: 11 },
      (_, i) => `sf-${(i + 1).toString(16).padStart(16, '0')}.sfa.tmp`,
    )
    const retired = (await names('.sfa.tmp')).filter((n) => trimmed.includes(n))
    expect(retired).toEqual(trimmed.slice(0, 8))
    // retired files count as disk use, like the segments and the spare (once it is ready)
    const { segments, totalBytes } = slot.stats()
    expect(totalBytes - (segments + 8) * 4096).toBeGreaterThanOrEqual(0)
    expect(totalBytes - (segments + 8) * 4096).toBeLessThanOrEqual(4096)
    const inodes = new Set(await Promise.all(retired.map(async (n) => (await stat(path.join(dir, n))).ino)))
    await appendAll(
      slot,
      Array.from({ length: 37 * 3 }, (_, i) => payload(1000 + i, 100)),
    )
    const reused = await Promise.all(
      (await names('.sfa')).map(async (n) => (await stat(path.join(dir, n))).ino),
    )
    expect(reused.filter((ino) => inodes.has(ino)).length).toBeGreaterThanOrEqual(2)
    expect((await collect(slot.replay())).map((f) => f.fsn)).toEqual(
      Array.from({ length: 37 * 4 }, (_, i) => BigInt(37 * 11 + 1 + i)),
    )
    await slot.close()
    expect(await names('.tmp')).toEqual([])
  })

  it('rejects an ack above publishedFsn with SF_ACK_OUT_OF_RANGE and ignores a lower one', async () => {
    const slot = await openSlot({ sfDir: await tmpSfDir(), ...small })
    await slot.append(payload(1))
    await expect(slot.ack(2n)).rejects.toMatchObject({ code: 'SF_ACK_OUT_OF_RANGE' })
    await slot.ack(1n)
    await slot.ack(0n)
    expect(slot.ackedFsn).toBe(1n)
    await slot.close()
  })

  it('a clean shutdown that drained everything reopens as a fresh slot, with FSNs continuing', async () => {
    const sfDir = await tmpSfDir()
    let slot = await openSlot({ sfDir, ...small })
    await appendAll(
      slot,
      Array.from({ length: 60 }, (_, i) => payload(i, 200)),
    )
    await slot.ack(60n)
    await slot.close()
    const names = await readdir(path.join(sfDir, 'default'))
    expect(names.filter((n) => n.includes('.sfa'))).toEqual([])
    expect(names).toContain('.ack-watermark')
    slot = await openSlot({ sfDir, ...small })
    expect(await collect(slot.replay())).toEqual([])
    expect(slot.stats().segments).toBe(0)
    expect(await slot.append(payload(1))).toBe(61n)
    await slot.close()
  })

  it('writes a copied payload as it was when its batch started, with a CRC of those bytes', async () => {
    const sfDir = await tmpSfDir()
    const io = new FaultyFs()
    const slot = await openSlot({ sfDir, ...small, io })
    // 36 frames of 108 bytes; the 37th ends segment 1, the 38th starts segment 2.
    await appendAll(
      slot,
      Array.from({ length: 36 }, (_, i) => payload(i)),
    )
    const [last, next] = [payload(37), payload(38)]
    const original = Buffer.from(next)
    // The caller breaks the contract: it changes `next` while the batch is written (at the rotation).
    io.fault = (op, file) => {
      if (op === 'datasync' && file.includes('sf-0000000000000001.sfa')) next.fill(0xee)
      return undefined
    }
    await appendAll(slot, [last, next])
    await slot.close()
    const reopened = await openSlot({ sfDir, ...small, logger: captureLogger() })
    const frames = await collect(reopened.replay())
    expect(frames).toHaveLength(38)
    expect(Buffer.from(frames[37]!.payload)).toEqual(original)
    expect(reopened.stats().dataLoss).toEqual([])
    await reopened.close()
  })

  it('refuses a frame larger than a segment with SF_FRAME_TOO_LARGE and stays usable', async () => {
    const slot = await openSlot({ sfDir: await tmpSfDir(), ...small })
    await expect(slot.append(Buffer.alloc(4096))).rejects.toMatchObject({ code: 'SF_FRAME_TOO_LARGE' })
    // the largest frame that fits: segment - header - frame header
    expect(await slot.append(Buffer.alloc(4096 - 32 - 8, 1))).toBe(1n)
    expect(await slot.append(payload(2))).toBe(2n)
    expect((await collect(slot.replay())).length).toBe(2)
    await slot.close()
  })

  it('replay streams a slot larger than its read buffer, frame by frame', async () => {
    const slot = await openSlot({
      sfDir: await tmpSfDir(),
      maxSegmentBytes: 4 << 20,
      maxTotalBytes: 64 << 20,
    })
    const big = Array.from({ length: 12 }, (_, i) => payload(i, 1_500_000))
    for (const p of big) await slot.append(p)
    let n = 0
    for await (const f of slot.replay()) {
      expect(Buffer.from(f.payload).equals(big[n]!)).toBe(true)
      n++
    }
    expect(n).toBe(12)
    await slot.close()
  })

  it('replay keeps going while acks delete the segments it reads', async () => {
    const slot = await openSlot({ sfDir: await tmpSfDir(), ...small })
    await appendAll(
      slot,
      Array.from({ length: 100 }, (_, i) => payload(i, 200)),
    )
    const seen: bigint[] = []
    for await (const f of slot.replay()) {
      seen.push(f.fsn)
      await slot.ack(f.fsn)
    }
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => BigInt(i + 1)))
    expect(slot.stats().segments).toBe(1)
    await slot.close()
  })

  it('replay stops reading a segment that an ack trimmed under it, even once its file is reused', async () => {
    const slot = await openSlot({
      sfDir: await tmpSfDir(),
      maxSegmentBytes: 4 << 20,
      maxTotalBytes: 64 << 20,
    })
    // 15 frames of 256 KiB per segment; replay reads 1 MiB, so its next read starts at frame 5
    const perSegment = 15
    const all = Array.from({ length: perSegment * 5 }, (_, i) => payload(i + 1, 256 * 1024 - 8))
    await appendAll(slot, all.slice(0, perSegment * 3))
    const acked = BigInt(perSegment * 2)
    const seen: bigint[] = []
    for await (const f of slot.replay()) {
      expect(Buffer.from(f.payload).equals(all[Number(f.fsn) - 1]!), `frame ${f.fsn}`).toBe(true)
      seen.push(f.fsn)
      if (f.fsn === 1n) {
        await slot.ack(acked) // segments 1 and 2 go; their files are retired for reuse
        // two rotations: segment 1's file is zeroed and refilled, frames at the same offsets as before
        await appendAll(slot, all.slice(perSegment * 3))
      }
    }
    // frames of segment 1 read before the ack may still come (each checked above), then the rest
    expect(seen.filter((fsn) => fsn > acked)).toEqual(
      Array.from({ length: perSegment * 3 }, (_, i) => acked + 1n + BigInt(i)),
    )
    expect(slot.stats().dataLoss).toEqual([])
    await slot.close()
  })

  it('notifies onPublished and onAcked listeners, and unsubscribes', async () => {
    const slot = await openSlot({ sfDir: await tmpSfDir(), ...small })
    const published: bigint[] = []
    const acked: bigint[] = []
    const off = slot.onPublished((f) => published.push(f))
    slot.onAcked((f) => acked.push(f))
    await appendAll(slot, [payload(1), payload(2), payload(3)])
    await slot.ack(2n)
    off()
    await slot.append(payload(4))
    expect(published.at(-1)).toBe(3n)
    expect(acked).toEqual([2n])
    await slot.close()
  })

  it('rejects use after close with SF_SLOT_CLOSED', async () => {
    const slot = await openSlot({ sfDir: await tmpSfDir(), ...small })
    await slot.close()
    await expect(slot.append(payload(1))).rejects.toMatchObject({ code: 'SF_SLOT_CLOSED' })
    await slot.close()
  })

  it('close waits for appends queued before it', async () => {
    const sfDir = await tmpSfDir()
    let slot = await openSlot({ sfDir, ...small })
    const pending = appendAll(
      slot,
      Array.from({ length: 50 }, (_, i) => payload(i)),
    )
    await slot.close()
    expect((await pending).length).toBe(50)
    slot = await openSlot({ sfDir, ...small })
    expect(slot.publishedFsn).toBe(50n)
    await slot.close()
  })

  it('rejects bad options with SF_INVALID_OPTION', async () => {
    const sfDir = await tmpSfDir()
    await expect(openSlot({ sfDir, senderId: '../x' })).rejects.toMatchObject({ code: 'SF_INVALID_OPTION' })
    await expect(openSlot({ sfDir, maxSegmentBytes: 100 })).rejects.toMatchObject({
      code: 'SF_INVALID_OPTION',
    })
    await expect(openSlot({ sfDir, maxSegmentBytes: 4096, maxTotalBytes: 4096 })).rejects.toMatchObject({
      code: 'SF_INVALID_OPTION',
    })
    await expect(openSlot({ sfDir, preallocate: 'holes' as 'sparse' })).rejects.toMatchObject({
      code: 'SF_INVALID_OPTION',
      message: expect.stringContaining('preallocate'),
    })
  })
})

describe("preallocate: 'sparse'", () => {
  const options = { maxSegmentBytes: 1 << 20, maxTotalBytes: 16 << 20, preallocate: 'sparse' as const }
  /** Bytes on disk of each segment file (spare included), by name. */
  async function allocated(dir: string): Promise<number[]> {
    const names = (await readdir(dir)).filter((n) => n.endsWith('.sfa')).sort()
    return Promise.all(names.map(async (n) => (await stat(path.join(dir, n))).blocks * 512))
  }

  it('makes new segments without writing their zeros, and they recover after a crash like zero-filled ones', async () => {
    const sfDir = await tmpSfDir()
    const dir = path.join(sfDir, 'default')
    const slot = await openSlot({ sfDir, ...options })
    const frames = Array.from({ length: 30 }, (_, i) => payload(i, 50_000)) // 1.5 MB: two segments
    await appendAll(slot, frames)
    // The second segment holds about 0.5 MB of frames, and takes no more on disk than that: a
    // zero-filled one takes its whole 1 MiB (the next test).
    const [, second] = await allocated(dir)
    expect(second).toBeLessThan(600_000)
    // A crash now: the segment files as they are, the slot still running.
    const crashed = await crashCopy(dir)
    const logger = captureLogger()
    const after = await openSlot({ sfDir: crashed, ...options, logger })
    const replayed = await collect(after.replay())
    // Compared as bytes: a deep equality of 1.5 MB would hold the event loop past the lock's heartbeat.
    expect(Buffer.concat(replayed.map((f) => f.payload)).equals(Buffer.concat(frames))).toBe(true)
    expect(after.stats()).toMatchObject({ tornTailBytes: 0, dataLoss: [] })
    expect(logger.text('error')).toBe('')
    await appendAll(after, [payload(99, 10)])
    expect(after.publishedFsn).toBe(31n)
    await after.close()
    await slot.close()
  })

  it('is not the default: new segments are zero-filled, their space taken at once', async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, ...options, preallocate: undefined })
    await appendAll(
      slot,
      Array.from({ length: 30 }, (_, i) => payload(i, 50_000)),
    )
    const [, second] = await allocated(path.join(sfDir, 'default'))
    expect(second).toBeGreaterThanOrEqual(1 << 20)
    await slot.close()
  })
})

describe('durability modes', () => {
  it("'append' shares one fdatasync among concurrent appends (group commit)", async () => {
    const slot = await openSlot({
      sfDir: await tmpSfDir(),
      maxSegmentBytes: 1 << 20,
      maxTotalBytes: 64 << 20,
    })
    await appendAll(
      slot,
      Array.from({ length: 1000 }, (_, i) => payload(i, 100)),
    )
    const { appends, syncs } = slot.stats()
    expect(appends).toBe(1000)
    expect(syncs).toBeLessThan(20)
    await slot.close()
  })

  it("'append' syncs before every resolve of sequential appends", async () => {
    const slot = await openSlot({ sfDir: await tmpSfDir(), ...small })
    for (let i = 0; i < 5; i++) await slot.append(payload(i))
    expect(slot.stats().syncs).toBe(5)
    await slot.close()
  })

  it("'periodic' syncs on its timer, not per append", async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, ...small, durability: 'periodic', syncIntervalMs: 100 })
    for (let i = 0; i < 30; i++) await slot.append(payload(i))
    expect(slot.stats().syncs).toBeLessThan(15) // per-append syncing would be 30
    const before = slot.stats().syncs
    await slot.append(payload(30))
    // No append follows: only the timer can sync it.
    await expect.poll(() => slot.stats().syncs, { timeout: 10_000 }).toBeGreaterThan(before)
    await slot.close()
  })

  it("'memory' never syncs appends but keeps frames across a clean reopen", async () => {
    const sfDir = await tmpSfDir()
    let slot = await openSlot({ sfDir, ...small, durability: 'memory' })
    for (let i = 0; i < 5; i++) await slot.append(payload(i))
    expect(slot.stats().syncs).toBe(0)
    await slot.close()
    slot = await openSlot({ sfDir, ...small })
    expect(slot.publishedFsn).toBe(5n)
    await slot.close()
  })
})

describe('capacity', () => {
  const tiny = { maxSegmentBytes: 1024, maxTotalBytes: 3 * 1024 }

  it('append fails at once with SF_BACKPRESSURE when the segment budget is used, and counts the stall', async () => {
    const slot = await openSlot({ sfDir: await tmpSfDir(), ...tiny })
    let n = 0
    const err = await (async () => {
      for (;;) {
        await slot.append(payload(n, 200))
        n++
      }
    })().catch((e) => e)
    expect(err.code).toBe('SF_BACKPRESSURE')
    expect(err.message).toMatch(/maxTotalBytes 3072/)
    expect(n).toBe(12) // 3 segments × 4 frames of 208 bytes in 992 usable bytes
    expect(slot.stats().backpressureStalls).toBe(1)
    expect(slot.stats().totalBytes).toBeLessThanOrEqual(3 * 1024)
    await slot.close()
  })

  it('appendBlocking waits for acks to free space without blocking the event loop', async () => {
    const slot = await openSlot({ sfDir: await tmpSfDir(), ...tiny, appendDeadlineMs: 5000 })
    for (let i = 0; i < 12; i++) await slot.append(payload(i, 200))
    let ticks = 0
    const ticker = setInterval(() => ticks++, 5)
    const blocked = slot.appendBlocking(payload(12, 200))
    await new Promise((r) => setTimeout(r, 50))
    await slot.ack(4n)
    expect(await blocked).toBe(13n)
    clearInterval(ticker)
    expect(ticks).toBeGreaterThan(3)
    expect(slot.stats().backpressureStalls).toBe(1)
    await slot.close()
  })

  it('appendBlocking gives up after appendDeadlineMs with SF_APPEND_DEADLINE saying why', async () => {
    const slot = await openSlot({
      sfDir: await tmpSfDir(),
      ...tiny,
      appendDeadlineMs: 60,
      describeStall: () => 'reconnecting since 12:00, attempt 3',
    })
    for (let i = 0; i < 12; i++) await slot.append(payload(i, 200))
    const err = await slot.appendBlocking(payload(12, 200)).catch((e) => e)
    expect(err.code).toBe('SF_APPEND_DEADLINE')
    expect(err.message).toMatch(/no ack arrived/)
    expect(err.message).toMatch(/reconnecting since 12:00, attempt 3/)
    await slot.close()
  })

  it('appendBlocking rejects waiting appenders when the slot closes', async () => {
    const slot = await openSlot({ sfDir: await tmpSfDir(), ...tiny, appendDeadlineMs: 10_000 })
    for (let i = 0; i < 12; i++) await slot.append(payload(i, 200))
    const blocked = expect(slot.appendBlocking(payload(12, 200))).rejects.toMatchObject({
      code: 'SF_SLOT_CLOSED',
    })
    await slot.close()
    await blocked
  })
})

describe('.failed', () => {
  it('markFailed writes the UTF-8 reason', async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, ...small })
    await slot.markFailed('reconnect budget exhausted — ü')
    expect(await readFile(path.join(sfDir, 'default', '.failed'), 'utf8')).toBe(
      'reconnect budget exhausted — ü',
    )
    await slot.close()
  })
})

describe('recovery through openSlot', () => {
  it('logs a torn tail as information and keeps appending after the last valid frame', async () => {
    const sfDir = await tmpSfDir()
    let slot = await openSlot({ sfDir, ...small })
    await appendAll(slot, [payload(1), payload(2)])
    await slot.close()
    const seg = path.join(sfDir, 'default', 'sf-0000000000000001.sfa')
    const bytes = await readFile(seg)
    const end = 32 + 2 * 108
    bytes.fill(0x5a, end, end + 40) // a frame whose write was cut short
    await writeFile(seg, bytes)
    const logger = captureLogger()
    slot = await openSlot({ sfDir, ...small, logger })
    expect(slot.stats().tornTailBytes).toBe(40)
    expect(logger.text('info')).toMatch(/torn tail in sf-0000000000000001.sfa: 40 bytes/)
    expect(await slot.append(payload(3))).toBe(3n)
    await slot.close()
    slot = await openSlot({ sfDir, ...small, logger: captureLogger() })
    expect(slot.stats().tornTailBytes).toBe(0)
    expect((await collect(slot.replay())).map((f) => Buffer.from(f.payload))).toEqual([
      payload(1),
      payload(2),
      payload(3),
    ])
    await slot.close()
  })

  it('removes leftover temporary files', async () => {
    const sfDir = await tmpSfDir()
    let slot = await openSlot({ sfDir, ...small })
    await slot.append(payload(1))
    await slot.close()
    await writeFile(path.join(sfDir, 'default', 'sf-0000000000000009.sfa.tmp'), Buffer.alloc(4096))
    slot = await openSlot({ sfDir, ...small })
    expect(await readdir(path.join(sfDir, 'default'))).not.toContain('sf-0000000000000009.sfa.tmp')
    await slot.close()
    await rm(sfDir, { recursive: true })
  })
})
