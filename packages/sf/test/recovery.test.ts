import { copyFile, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { encodeWatermark } from '../src/format.js'
import { openSlot } from '../src/slot.js'
import { appendAll, captureLogger, collect, payload, segmentPath, tmpSfDir } from './support/helpers.js'

// 4096-byte segments hold 37 frames of 108 bytes (32-byte header + 37 × 108 = 4028):
// sf-…1: FSNs 1..37, sf-…2: 38..74, sf-…3: 75..100.
const opts = { maxSegmentBytes: 4096, maxTotalBytes: 64 * 4096 }
const FRAME = 108
const frameOffset = (fsn: number, base: number): number => 32 + (fsn - base) * FRAME
const payloads = Array.from({ length: 100 }, (_, i) => payload(i + 1, 100))

async function threeSegments(ack?: bigint): Promise<string> {
  const sfDir = await tmpSfDir()
  const slot = await openSlot({ sfDir, ...opts })
  await appendAll(slot, payloads)
  if (ack !== undefined) await slot.ack(ack)
  await slot.close()
  return sfDir
}

async function damage(file: string, at: number, bytes = 1): Promise<void> {
  const b = await readFile(file)
  for (let i = 0; i < bytes; i++) b[at + i]! ^= 0xff
  await writeFile(file, b)
}

async function reopen(sfDir: string) {
  const logger = captureLogger()
  const slot = await openSlot({ sfDir, ...opts, logger })
  const fsns = (await collect(slot.replay())).map((f) => {
    expect(Buffer.from(f.payload)).toEqual(payloads[Number(f.fsn) - 1])
    return Number(f.fsn)
  })
  return { slot, logger, fsns }
}

const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i)

describe('recovery', () => {
  it('"Gap between segments": a deleted middle segment is fatal and names the missing FSNs', async () => {
    const sfDir = await threeSegments()
    await unlink(segmentPath(sfDir, 2))
    const err = await openSlot({ sfDir, ...opts }).catch((e) => e)
    expect(err.code).toBe('SF_SEGMENT_GAP')
    expect(err.message).toMatch(
      /FSNs 38\.\.74 are missing between sf-0000000000000001\.sfa and sf-0000000000000003\.sfa/,
    )
    // the refusal released the lock: fixing the slot (here: accepting the loss) lets it open
    await unlink(segmentPath(sfDir, 1))
    const { slot, fsns } = await reopen(sfDir)
    expect(fsns).toEqual(range(75, 100))
    await slot.close()
  })

  it('a gap at or below the watermark is acked data, not a gap', async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, ...opts })
    await appendAll(slot, payloads)
    const seg1 = await readFile(segmentPath(sfDir, 1))
    await slot.ack(80n)
    await slot.close()
    await writeFile(segmentPath(sfDir, 1), seg1) // an unlink that did not survive a crash
    const { slot: again, fsns } = await reopen(sfDir)
    expect(again.ackedFsn).toBe(80n)
    expect(fsns).toEqual(range(81, 100))
    await again.close()
  })

  it('"Watermark exceeds publishedFsn": warns and falls back to the lowest segment', async () => {
    const sfDir = await threeSegments(40n)
    await writeFile(path.join(sfDir, 'default', '.ack-watermark'), encodeWatermark(5000n))
    const { slot, logger, fsns } = await reopen(sfDir)
    expect(logger.text('warn')).toMatch(/\.ack-watermark .* \(5000\) exceeds publishedFsn 100; ignoring it/)
    expect(slot.ackedFsn).toBe(37n) // segment 1 was trimmed: lowestBaseSeq 38 - 1
    expect(fsns).toEqual(range(38, 100))
    await slot.close()
  })

  it('a corrupt watermark is a warning, never a crash', async () => {
    const sfDir = await threeSegments(50n)
    await damage(path.join(sfDir, 'default', '.ack-watermark'), 12)
    const { slot, logger } = await reopen(sfDir)
    expect(logger.text('warn')).toMatch(/\.ack-watermark .* is corrupt \(checksum mismatch\)/)
    expect(slot.ackedFsn).toBe(37n)
    await slot.close()
  })

  it('seeds ackedFsn = max(lowestBaseSeq - 1, watermark)', async () => {
    const sfDir = await threeSegments(50n)
    let { slot } = await reopen(sfDir)
    expect(slot.ackedFsn).toBe(50n)
    await slot.close()
    await unlink(path.join(sfDir, 'default', '.ack-watermark'))
    ;({ slot } = await reopen(sfDir))
    expect(slot.ackedFsn).toBe(37n)
    await slot.close()
  })

  it('"Torn tail count > 0" after a crash mid-append is informational; no frame is lost', async () => {
    const sfDir = await threeSegments()
    const seg3 = segmentPath(sfDir, 3)
    const b = await readFile(seg3)
    const end = frameOffset(101, 75)
    payloads[0]!.copy(b, end + 8, 0, 50) // half a frame: payload bytes without a valid header
    b.writeUInt32LE(100, end + 4)
    await writeFile(seg3, b)
    const { slot, logger, fsns } = await reopen(sfDir)
    expect(fsns).toEqual(range(1, 100))
    expect(slot.stats().tornTailBytes).toBeGreaterThan(40)
    expect(slot.stats().dataLoss).toEqual([])
    expect(logger.text('info')).toMatch(/torn tail in sf-0000000000000003\.sfa/)
    expect(logger.text('error')).toBe('')
    expect(await slot.append(payload(101, 100))).toBe(101n)
    await slot.close()
  })

  it('damage inside a sealed segment surfaces in replay as data loss with the exact FSN range', async () => {
    const sfDir = await threeSegments()
    await damage(segmentPath(sfDir, 2), frameOffset(50, 38) + 20)
    const logger = captureLogger()
    const slot = await openSlot({ sfDir, ...opts, logger })
    // Recovery took segment 2's extent from its seal and did not read its frames (invariant 8).
    expect(slot.stats().dataLoss).toEqual([])
    expect(slot.publishedFsn).toBe(100n)
    for (let pass = 0; pass < 2; pass++) {
      const frames = await collect(slot.replay())
      for (const f of frames) expect(Buffer.from(f.payload)).toEqual(payloads[Number(f.fsn) - 1])
      expect(frames.map((f) => Number(f.fsn))).toEqual([...range(1, 49), ...range(75, 100)])
    }
    // reported once, as recovery reports damage
    expect(slot.stats().dataLoss).toEqual([
      { fromFsn: 50n, toFsn: 74n, exact: true, segment: 'sf-0000000000000002.sfa', reason: 'damaged frame' },
    ])
    expect(logger.text('error')).toMatch(/^data loss in slot .*: FSNs 50\.\.74 are unreadable[^\n]*$/)
    expect(await slot.append(payload(101, 100))).toBe(101n)
    await slot.close()
  })

  it('a segment whose seal is damaged has its frames walked at open', async () => {
    const sfDir = await threeSegments()
    await damage(segmentPath(sfDir, 2), 4096 - 20) // inside the seal
    const intact = await reopen(sfDir)
    expect(intact.fsns).toEqual(range(1, 100))
    await intact.slot.close()
    await damage(segmentPath(sfDir, 2), frameOffset(50, 38) + 20)
    const slot = await openSlot({ sfDir, ...opts, logger: captureLogger() })
    expect(slot.stats().dataLoss).toMatchObject([{ fromFsn: 50n, toFsn: 74n, exact: true }])
    await slot.close()
  })

  it('never appends to a sealed last segment (a crash right after rotation sealed it)', async () => {
    const sfDir = await threeSegments()
    // What such a crash leaves: segment 2 sealed, segment 3 an all-zero spare (its frames never synced).
    await writeFile(segmentPath(sfDir, 3), Buffer.alloc(4096))
    let slot = await openSlot({ sfDir, ...opts })
    expect(slot.publishedFsn).toBe(74n)
    // small enough to fit after segment 2's last frame, where its seal would no longer describe it
    const small = payload(75, 20)
    expect(await slot.append(small)).toBe(75n)
    await slot.close()
    slot = await openSlot({ sfDir, ...opts })
    const frames = await collect(slot.replay())
    expect(frames.map((f) => Number(f.fsn))).toEqual(range(1, 75))
    expect(Buffer.from(frames.at(-1)!.payload)).toEqual(small)
    await slot.close()
  })

  it('damage in the last segment is data loss up to a bound, and those FSNs are never reused', async () => {
    const sfDir = await threeSegments()
    await damage(segmentPath(sfDir, 3), frameOffset(80, 75) + 3)
    const { slot, fsns } = await reopen(sfDir)
    expect(fsns).toEqual(range(1, 79))
    const [loss] = slot.stats().dataLoss
    expect(loss).toMatchObject({ fromFsn: 80n, exact: false, segment: 'sf-0000000000000003.sfa' })
    expect(loss!.toFsn).toBeGreaterThanOrEqual(100n)
    const next = await slot.append(payload(1, 100))
    expect(next).toBe(loss!.toFsn + 1n)
    await slot.close()
    // the next open reports the same range (now bounded by the new segment) and keeps everything else
    const again = await openSlot({ sfDir, ...opts, logger: captureLogger() })
    expect(again.stats().dataLoss).toMatchObject([{ fromFsn: 80n, toFsn: loss!.toFsn }])
    expect(again.publishedFsn).toBe(next)
    await again.close()
  })

  it('an unreadable segment header is data loss between its neighbours', async () => {
    const sfDir = await threeSegments()
    await damage(segmentPath(sfDir, 2), 0, 4)
    const { slot, logger, fsns } = await reopen(sfDir)
    expect(fsns).toEqual([...range(1, 37), ...range(75, 100)])
    expect(slot.stats().dataLoss).toMatchObject([
      { fromFsn: 38n, toFsn: 74n, reason: 'unreadable segment header' },
    ])
    expect(logger.text('error')).toMatch(/sf-0000000000000002\.sfa .* unusable header \(bad magic\)/)
    await slot.close()
  })

  it('ranges at or below the watermark are not reported', async () => {
    const sfDir = await threeSegments(40n)
    await damage(segmentPath(sfDir, 2), frameOffset(39, 38) + 20)
    const { slot, fsns } = await reopen(sfDir)
    expect(slot.stats().dataLoss).toMatchObject([{ fromFsn: 41n, toFsn: 74n }])
    expect(fsns).toEqual(range(75, 100))
    await slot.close()
  })

  it('deletes an unused spare (the highest generation, all zeros) without a report', async () => {
    const sfDir = await threeSegments()
    await writeFile(segmentPath(sfDir, 9), Buffer.alloc(4096))
    const { slot, logger, fsns } = await reopen(sfDir)
    expect(fsns).toEqual(range(1, 100))
    expect(logger.text('error')).toBe('')
    expect(slot.stats().dataLoss).toEqual([])
    expect(await readdir(path.join(sfDir, 'default'))).not.toContain('sf-0000000000000009.sfa')
    await slot.close()
  })

  it('deletes a reused spare (highest generation, blank header, old frames) without a report', async () => {
    const sfDir = await threeSegments()
    const reused = await readFile(segmentPath(sfDir, 1))
    reused.fill(0, 0, 32)
    await writeFile(segmentPath(sfDir, 9), reused)
    const { slot, logger, fsns } = await reopen(sfDir)
    expect(fsns).toEqual(range(1, 100))
    expect(logger.text('error')).toBe('')
    expect(await readdir(path.join(sfDir, 'default'))).not.toContain('sf-0000000000000009.sfa')
    await slot.close()
  })

  it('a blank header below the highest generation is an unreadable segment, not a spare', async () => {
    const sfDir = await threeSegments()
    const seg2 = await readFile(segmentPath(sfDir, 2))
    seg2.fill(0, 0, 32)
    await writeFile(segmentPath(sfDir, 2), seg2)
    const { slot, logger, fsns } = await reopen(sfDir)
    expect(logger.text('error')).toMatch(/sf-0000000000000002\.sfa .* unusable header/)
    expect(slot.stats().dataLoss).toMatchObject([{ fromFsn: 38n, toFsn: 74n, exact: true }])
    expect(fsns).toEqual([...range(1, 37), ...range(75, 100)])
    await slot.close()
  })

  it('segments whose FSN ranges overlap are refused with SF_SLOT_CORRUPT', async () => {
    const sfDir = await threeSegments()
    await copyFile(segmentPath(sfDir, 2), segmentPath(sfDir, 9))
    await expect(openSlot({ sfDir, ...opts })).rejects.toMatchObject({ code: 'SF_SLOT_CORRUPT' })
  })

  it('allocates the next generation as max(existing) + 1', async () => {
    const sfDir = await threeSegments()
    await rename(segmentPath(sfDir, 3), segmentPath(sfDir, 0x41))
    const slot = await openSlot({ sfDir, ...opts })
    await appendAll(
      slot,
      Array.from({ length: 40 }, (_, i) => payload(i, 100)),
    )
    const names = (await readdir(path.join(sfDir, 'default'))).filter((n) => n.endsWith('.sfa')).sort()
    expect(names.slice(0, 4)).toEqual([
      'sf-0000000000000001.sfa',
      'sf-0000000000000002.sfa',
      'sf-0000000000000041.sfa',
      'sf-0000000000000042.sfa',
    ])
    await slot.close()
  })
})
