import { crc32c } from '@node-rs/crc32'
import { describe, expect, it } from 'vitest'
import {
  checkFrame,
  decodeSeal,
  decodeSegmentHeader,
  decodeWatermark,
  encodeFrame,
  encodeSeal,
  encodeSegmentHeader,
  encodeWatermark,
  FRAME_INCOMPLETE,
  FRAME_INVALID,
  frameSalt,
  isBlankHeader,
  parseSegmentFileName,
  segmentFileName,
} from '../src/format.js'

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex')

// Fixed bytes: the on-disk format is a contract with every future version of this package.
const HEADER = hex('534b5346 0200 0000 0500000000000000 0068e5cf8b010000 00000000 0820f2f0')
// A reused file whose previous segment's bytes reach offset 4000.
const HEADER_STALE = hex('534b5346 0200 0000 0500000000000000 0068e5cf8b010000 a00f0000 10a7d639')
// Frames of the segment from FSN 5.
const FRAME_HI = hex('8d4feda8 02000000 6869')
const FRAME_EMPTY = hex('ad31d6df 00000000')
const SALT_5 = frameSalt(5n)
const WATERMARK_258 = hex('534b4157 0c645376 0201000000000000')
// The seal of a segment from FSN 5 holding 3 frames that end at offset 356.
const SEAL = hex('534b534c 22dee9cb 0500000000000000 03000000 64010000 0000000000000000')

describe('CRC32C', () => {
  it('is the Castagnoli polynomial (check value of "123456789")', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283)
  })
})

describe('segment header', () => {
  it('encodes to the fixed bytes', () => {
    expect(encodeSegmentHeader(5n, 1_700_000_000_000)).toEqual(HEADER)
    expect(encodeSegmentHeader(5n, 1_700_000_000_000, 4000)).toEqual(HEADER_STALE)
  })

  it('decodes the fixed bytes', () => {
    expect(decodeSegmentHeader(HEADER)).toEqual({
      version: 2,
      flags: 0,
      baseSeq: 5n,
      createdAtMs: 1_700_000_000_000,
      staleEnd: 0,
    })
    expect(decodeSegmentHeader(HEADER_STALE)).toMatchObject({ staleEnd: 4000 })
  })

  it('refuses a format version it does not know, naming it', () => {
    const v1 = hex('534b5346 0100 0000 0500000000000000 0068e5cf8b010000 c6cd827e 00000000')
    expect(decodeSegmentHeader(v1)).toBe('unsupported format version 1 (this reader knows 2)')
  })

  it('tells a blank header (an unused spare) from any other', () => {
    expect(isBlankHeader(Buffer.alloc(32))).toBe(true)
    expect(isBlankHeader(HEADER)).toBe(false)
    expect(isBlankHeader(Buffer.alloc(31))).toBe(false)
  })

  it('explains why bytes are not a header', () => {
    expect(decodeSegmentHeader(HEADER.subarray(0, 10))).toMatch(/truncated/)
    expect(decodeSegmentHeader(Buffer.alloc(32))).toBe('bad magic')
    const flipped = Buffer.from(HEADER)
    flipped[9]! ^= 1
    expect(decodeSegmentHeader(flipped)).toBe('header checksum mismatch')
  })
})

describe('frame', () => {
  it('encodes to the fixed bytes', () => {
    expect(encodeFrame(Buffer.from('hi'), SALT_5)).toEqual(FRAME_HI)
    expect(encodeFrame(new Uint8Array(0), SALT_5)).toEqual(FRAME_EMPTY)
  })

  it("has a CRC32C over the segment's baseSeq, then the length and payload", () => {
    const baseSeq = Buffer.alloc(8)
    baseSeq.writeBigUInt64LE(5n)
    expect(FRAME_HI.readUInt32LE(0)).toBe(crc32c(Buffer.concat([baseSeq, FRAME_HI.subarray(4)])))
  })

  it('checks a valid frame and returns its payload length', () => {
    expect(checkFrame(FRAME_HI, 0, FRAME_HI.length, 100, SALT_5)).toBe(2)
    expect(checkFrame(FRAME_EMPTY, 0, FRAME_EMPTY.length, 8, SALT_5)).toBe(0)
  })

  it("never passes in another segment: a reused file's old frames are not new ones", () => {
    for (const other of [4n, 6n, 5n + (1n << 32n), 0n]) {
      expect(checkFrame(FRAME_HI, 0, FRAME_HI.length, 100, frameSalt(other)), `${other}`).toBe(FRAME_INVALID)
    }
  })

  it('never accepts zero fill, so preallocated space ends the data', () => {
    const zeros = Buffer.alloc(64)
    for (let baseSeq = 0n; baseSeq < 1000n; baseSeq++) {
      expect(checkFrame(zeros, 0, zeros.length, zeros.length, frameSalt(baseSeq))).toBe(FRAME_INVALID)
    }
  })

  it('rejects any single flipped bit', () => {
    for (let bit = 0; bit < FRAME_HI.length * 8; bit++) {
      const b = Buffer.from(FRAME_HI)
      b[bit >> 3]! ^= 1 << (bit & 7)
      expect(checkFrame(b, 0, b.length, b.length, SALT_5), `bit ${bit}`).toBeLessThan(0)
    }
  })

  it('asks for more bytes when the frame is cut by the buffer, not by its limit', () => {
    expect(checkFrame(FRAME_HI, 0, 5, 100, SALT_5)).toBe(FRAME_INCOMPLETE)
    expect(checkFrame(FRAME_HI, 0, 9, 100, SALT_5)).toBe(FRAME_INCOMPLETE)
    expect(checkFrame(FRAME_HI, 0, 9, 9, SALT_5)).toBe(FRAME_INVALID)
  })
})

describe('seal', () => {
  const seal = { baseSeq: 5n, count: 3, end: 356 }

  it('encodes to the fixed bytes and back', () => {
    expect(encodeSeal(seal)).toEqual(SEAL)
    expect(decodeSeal(SEAL, 5n, 4096)).toEqual(seal)
  })

  it('is refused when damaged, for another header, or not fitting its file', () => {
    for (let i = 0; i < 32; i++) {
      const b = Buffer.from(SEAL)
      b[i]! ^= 0x10
      expect(decodeSeal(b, 5n, 4096), `byte ${i}`).toBeUndefined()
    }
    expect(decodeSeal(SEAL, 6n, 4096)).toBeUndefined() // a seal left from the file's previous use
    expect(decodeSeal(SEAL, 5n, 356 + 31)).toBeUndefined() // frames would overlap the seal
    expect(decodeSeal(encodeSeal({ ...seal, end: 32 + 3 * 8 - 1 }), 5n, 4096)).toBeUndefined()
    expect(decodeSeal(Buffer.alloc(32), 5n, 4096)).toBeUndefined()
  })
})

describe('.ack-watermark', () => {
  it('encodes to the fixed 16 bytes and back', () => {
    expect(encodeWatermark(258n)).toEqual(WATERMARK_258)
    expect(decodeWatermark(WATERMARK_258)).toBe(258n)
  })

  it('detects its own corruption', () => {
    for (let i = 0; i < 16; i++) {
      const b = Buffer.from(WATERMARK_258)
      b[i]! ^= 0x10
      expect(typeof decodeWatermark(b), `byte ${i}`).toBe('string')
    }
    expect(decodeWatermark(WATERMARK_258.subarray(0, 15))).toMatch(/expected 16 bytes/)
  })
})

describe('segment file names', () => {
  it('are sf-<16 hex digit generation>.sfa', () => {
    expect(segmentFileName(1n)).toBe('sf-0000000000000001.sfa')
    expect(segmentFileName(0xabcn)).toBe('sf-0000000000000abc.sfa')
    expect(parseSegmentFileName('sf-0000000000000abc.sfa')).toBe(0xabcn)
    expect(parseSegmentFileName('sf-0000000000000abc.sfa.tmp')).toBeUndefined()
    expect(parseSegmentFileName('sf-abc.sfa')).toBeUndefined()
  })
})
