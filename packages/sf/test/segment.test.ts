import { readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { encodeFrame, encodeSeal, encodeSegmentHeader, frameSalt } from '../src/format.js'
import { nodeFs, writeFully } from '../src/io.js'
import { blankSegmentFile, createSegmentFile, FRAME_END, FrameReader, scanSegment } from '../src/segment.js'
import { payload, tmpSfDir } from './support/helpers.js'

const SALT_1 = frameSalt(1n)
const frame = (p: Buffer, salt = SALT_1): Buffer => encodeFrame(p, salt)

/** A zero-filled segment file starting at FSN 1: its header, then these frames and tail. */
async function segmentFile(
  frames: Buffer[],
  size: number,
  tail?: Buffer,
  options: { staleEnd?: number } = {},
) {
  const dir = await tmpSfDir()
  const name = path.join(dir, 'sf-0000000000000001.sfa')
  const file = await createSegmentFile(nodeFs, name, size, 'zeros')
  let at = 0
  for (const b of [encodeSegmentHeader(1n, 0, options.staleEnd), ...frames, ...(tail ? [tail] : [])]) {
    await writeFully(file, b, 0, b.length, at)
    at += b.length
  }
  return { dir, file }
}

describe('createSegmentFile', () => {
  const SIZE = 3 * 1024 * 1024 + 5

  /** The file's size, whether bytes deep inside read as zeros, and the bytes it has on disk. */
  async function made(preallocate: 'zeros' | 'sparse') {
    const file = path.join(await tmpSfDir(), 'x')
    const f = await createSegmentFile(nodeFs, file, SIZE, preallocate)
    const size = await f.size()
    const b = Buffer.alloc(100)
    await f.read(b, 0, 100, 2 * 1024 * 1024)
    await f.close()
    return { size, zeros: b.every((x) => x === 0), allocated: (await stat(file)).blocks * 512 }
  }

  it('zeros: makes a file of real zero bytes of the given size', async () => {
    const { size, zeros, allocated } = await made('zeros')
    expect(size).toBe(SIZE)
    expect(zeros).toBe(true)
    expect(allocated).toBeGreaterThanOrEqual(SIZE)
  })
  it('sparse: makes a file of the given size that reads as zeros, without writing them', async () => {
    const { size, zeros, allocated } = await made('sparse')
    expect(size).toBe(SIZE)
    expect(zeros).toBe(true)
    expect(allocated).toBeLessThan(64 * 1024)
  })
})

describe('blankSegmentFile', () => {
  it('zeroes only the header of a file being reused', async () => {
    const file = path.join(await tmpSfDir(), 'x')
    await writeFile(file, Buffer.alloc(4096, 0xff))
    const f = await blankSegmentFile(nodeFs, file)
    await f.close()
    const b = await readFile(file)
    expect(b.subarray(0, 32).every((x) => x === 0)).toBe(true)
    expect(b.subarray(32).every((x) => x === 0xff)).toBe(true)
  })
})

describe('FrameReader', () => {
  it('reads frames across chunk boundaries and frames larger than its buffer', async () => {
    const payloads = [payload(1, 10), payload(2, 5000), payload(3, 3), payload(4, 700)]
    const { file } = await segmentFile(
      payloads.map((p) => frame(p)),
      16384,
    )
    const reader = new FrameReader(file, SALT_1, 32, 16384, 64)
    for (const p of payloads) {
      const n = await reader.nextFrame()
      expect(n).toBe(p.length)
      expect(reader.buffer.subarray(reader.payloadAt, reader.payloadAt + n)).toEqual(p)
    }
    expect(await reader.nextFrame()).toBeLessThan(0) // zero fill
    await file.close()
  })

  it('hands over payloads the caller may keep, without copying a frame larger than its chunk', async () => {
    const payloads = [payload(1, 10), payload(2, 5000), payload(3, 3), payload(4, 6000), payload(5, 20)]
    const { file } = await segmentFile(
      payloads.map((p) => frame(p)),
      16384,
    )
    const reader = new FrameReader(file, SALT_1, 32, 16384, 64)
    const kept: Buffer[] = []
    const handedOver: boolean[] = []
    for (let n = await reader.nextFrame(); n >= 0; n = await reader.nextFrame()) {
      const before = reader.buffer
      const p = reader.keepPayload(n)
      handedOver.push(p.buffer === before.buffer && reader.buffer !== before)
      kept.push(p)
    }
    expect(kept).toEqual(payloads) // every kept payload intact after all later reads
    expect(handedOver).toEqual([false, true, false, true, false])
    await file.close()
  })

  it('stops exactly at its limit', async () => {
    const { file } = await segmentFile([frame(payload(1, 10))], 4096)
    const reader = new FrameReader(file, SALT_1, 32, 32 + 18)
    expect(await reader.nextFrame()).toBe(10)
    expect(await reader.nextFrame()).toBe(FRAME_END)
    await file.close()
  })
})

describe('scanSegment', () => {
  it('counts frames, finds the end and reports a torn tail', async () => {
    const half = frame(payload(9, 100)).subarray(0, 60)
    const { dir, file } = await segmentFile([frame(payload(1)), frame(payload(2))], 4096, half)
    await file.close()
    const scan = await scanSegment(nodeFs, dir, 'sf-0000000000000001.sfa')
    expect(scan).toMatchObject({ count: 2, end: 32 + 2 * 108, damaged: false, fileBytes: 4096 })
    if (typeof scan === 'string') throw new Error(scan)
    expect(scan.tornBytes).toBeGreaterThan(50)
    expect(scan.tornEnd).toBe(32 + 2 * 108 + 60)
  })

  it('takes count and end from a valid seal without reading the frames', async () => {
    const frames = [1, 2, 3].map((i) => frame(payload(i)))
    frames[1]![20]! ^= 1 // damage that only replay will see
    const { dir, file } = await segmentFile(frames, 4096)
    await writeFully(file, encodeSeal({ baseSeq: 1n, count: 3, end: 32 + 3 * 108 }), 0, 32, 4096 - 32)
    await file.close()
    expect(await scanSegment(nodeFs, dir, 'sf-0000000000000001.sfa')).toMatchObject({
      count: 3,
      end: 32 + 3 * 108,
      sealed: true,
      tornBytes: 0,
      damaged: false,
    })
  })

  it('walks the frames when the seal belongs to another header', async () => {
    const { dir, file } = await segmentFile([frame(payload(1))], 4096)
    await writeFully(file, encodeSeal({ baseSeq: 7n, count: 3, end: 32 + 3 * 108 }), 0, 32, 4096 - 32)
    await file.close()
    expect(await scanSegment(nodeFs, dir, 'sf-0000000000000001.sfa')).toMatchObject({
      count: 1,
      sealed: false,
    })
  })

  it('tells damage (a valid frame after the invalid one) from a torn tail', async () => {
    const frames = [1, 2, 3].map((i) => frame(payload(i)))
    frames[1]![20]! ^= 1
    const { dir, file } = await segmentFile(frames, 4096)
    await file.close()
    expect(await scanSegment(nodeFs, dir, 'sf-0000000000000001.sfa')).toMatchObject({
      count: 1,
      damaged: true,
    })
  })

  it('in a reused file, ends at the new frames and neither counts the old ones as torn nor as damage', async () => {
    // The previous segment (from FSN 900) filled the file with 8 frames and a seal.
    const old = Array.from({ length: 8 }, (_, i) => frame(payload(i, 400), frameSalt(900n)))
    const oldEnd = 32 + 8 * 408
    const { dir, file } = await segmentFile(old, 4096)
    await writeFully(file, encodeSeal({ baseSeq: 900n, count: 8, end: oldEnd }), 0, 32, 4096 - 32)
    // Reused from FSN 1: a new header and two shorter frames over the old ones.
    const fresh = [frame(payload(1)), frame(payload(2))]
    let at = 0
    for (const b of [encodeSegmentHeader(1n, 0, oldEnd), ...fresh]) {
      await writeFully(file, b, 0, b.length, at)
      at += b.length
    }
    await file.close()
    const scan = await scanSegment(nodeFs, dir, 'sf-0000000000000001.sfa')
    expect(scan).toMatchObject({ count: 2, end: 32 + 2 * 108, tornBytes: 0, damaged: false, sealed: false })
    if (typeof scan === 'string') throw new Error(scan)
    expect(scan.tornEnd).toBeGreaterThan(4096 - 32) // up to the old seal: zeroed before appending resumes
  })

  it('in a reused file, still counts a torn append past what the old segment left', async () => {
    const torn = frame(payload(9, 100)).subarray(0, 60)
    const { dir, file } = await segmentFile([frame(payload(1)), frame(payload(2))], 4096, torn, {
      staleEnd: 100,
    })
    await file.close()
    const scan = await scanSegment(nodeFs, dir, 'sf-0000000000000001.sfa')
    if (typeof scan === 'string') throw new Error(scan)
    expect(scan.count).toBe(2)
    expect(scan.tornBytes).toBeGreaterThan(50)
  })
})
