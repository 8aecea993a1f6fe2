import { describe, expect, it } from 'vitest'
import {
  decodeFrame,
  encodeBatchFrames,
  FORMAT_VERSION,
  isEpoch,
  mintEpoch,
  splitParts,
} from '../src/frame.js'
import type { BatchInput } from '../src/types.js'
import { COMMITTED_AT, encodeFrames } from './support/batches.js'

const EPOCH = '0123456789abcdef'
/** Hex bytes with `#` comments and any whitespace. */
const hex = (s: string): Buffer => Buffer.from(s.replace(/#[^\n]*/g, '').replace(/\s+/g, ''), 'hex')
const text = (s: string): Uint8Array => new TextEncoder().encode(s)

const BATCH: BatchInput = {
  offset: { n: 1 },
  parts: [{ namespace: 'rentals', schemaVersion: 2, format: 'csv', rows: 2, body: text('1,a\n2,b\n') }],
}

// Version 2, little-endian. See the layout in src/frame.ts and the README.
const HEADER = `
  0123456789abcdef                    # epoch
  00a8da769b010000                    # commit time 1767225600000 ms: 2026-01-01T00:00:00Z
  07000000 7b226e223a317d             # offset JSON {"n":1}
  0100                                # 1 part
  0700 72656e74616c73                 # namespace 'rentals'
  02000000 01 02000000                # schemaVersion 2, csv, 2 rows
  0800000000000000                    # body length 8
`

const ONE_FRAME = hex(`
  534b5742 02 01 0000 01000000        # magic, version 2, batch frame, reserved, 1 frame
  37000000                            # header length 55
  ${HEADER}
  312c610a322c620a                    # body tail: all of '1,a\n2,b\n'
`)

/** The same batch as an older skipprd wrote it: version 1, without a commit time. */
const VERSION_1_FRAME = hex(`
  534b5742 01 01 0000 01000000        # magic, version 1, batch frame, reserved, 1 frame
  2f000000                            # header length 47
  0123456789abcdef                    # epoch
  07000000 7b226e223a317d             # offset JSON {"n":1}
  0100 0700 72656e74616c73            # 1 part, namespace 'rentals'
  02000000 01 02000000                # schemaVersion 2, csv, 2 rows
  0800000000000000                    # body length 8
  312c610a322c620a                    # body tail
`)

describe('batch frame codec', () => {
  it('encodes a one-frame batch to the documented bytes', () => {
    const frames = encodeFrames(EPOCH, BATCH, 1024)
    expect(frames).toHaveLength(1)
    expect(frames[0]!.toString('hex')).toBe(ONE_FRAME.toString('hex'))
  })

  it('stores a body given in pieces exactly like the joined body', () => {
    const pieces: BatchInput = {
      ...BATCH,
      parts: [{ ...BATCH.parts[0]!, body: [text('1,a\n'), text(''), text('2,b\n')] }],
    }
    expect(encodeFrames(EPOCH, pieces, 1024)[0]!.toString('hex')).toBe(ONE_FRAME.toString('hex'))
    const split = encodeFrames(EPOCH, pieces, 74).map((f) => f.toString('hex'))
    expect(split).toEqual(encodeFrames(EPOCH, BATCH, 74).map((f) => f.toString('hex')))
  })

  it('hands the bodies over as views, never copies', () => {
    const body = BATCH.parts[0]!.body as Uint8Array
    const [pieces] = [...encodeBatchFrames(EPOCH, BATCH, 1024, COMMITTED_AT)]
    expect(pieces!.slice(1).every((piece) => piece.buffer === body.buffer)).toBe(true)
    expect(Buffer.concat(pieces!.slice(1))).toEqual(Buffer.from(body))
  })

  it('decodes the documented bytes, with bodies as views into the frame', () => {
    const frame = decodeFrame(ONE_FRAME, 'test')
    expect(frame).toMatchObject({
      kind: 'batch',
      frames: 1,
      epoch: EPOCH,
      committedAt: COMMITTED_AT,
      offset: { n: 1 },
      parts: [{ namespace: 'rentals', schemaVersion: 2, format: 'csv', rows: 2, bodyLength: 8 }],
    })
    if (frame.kind !== 'batch') throw new Error('expected a batch frame')
    const [part] = splitParts(frame.parts, frame.tail, 'test')
    expect(Buffer.from(part!.body).toString()).toBe('1,a\n2,b\n')
    expect(part!.body.buffer).toBe(ONE_FRAME.buffer)
  })

  it('reads a version 1 frame, written before commit times were kept, as the same batch without one', () => {
    const old = decodeFrame(VERSION_1_FRAME, 'test')
    const current = decodeFrame(ONE_FRAME, 'test')
    if (old.kind !== 'batch' || current.kind !== 'batch') throw new Error('expected batch frames')
    expect(old.committedAt).toBeUndefined()
    expect({ ...old, committedAt: COMMITTED_AT }).toEqual(current)
  })

  it('splits bodies that do not fit: data frames first, then the batch frame with the tail', () => {
    // The batch frame alone is 16 + 55 bytes; 74 leaves 3 bytes of tail room, so the 8 body bytes go to
    // one data frame and the batch frame carries an empty tail.
    const frames = encodeFrames(EPOCH, BATCH, 74).map((f) => f.toString('hex'))
    expect(frames).toEqual([
      hex('534b5742 02 02 0000 00000000 312c610a322c620a').toString('hex'),
      hex(`534b5742 02 01 0000 02000000 37000000 ${HEADER}`).toString('hex'),
    ])
  })

  it('fills data frames up to the frame size; the batch frame takes what fits beside its header', () => {
    const body = Buffer.alloc(250, 7)
    body[249] = 10
    const batch: BatchInput = {
      offset: 'x',
      parts: [
        { namespace: 'a', schemaVersion: 1, format: 'jsonl', rows: 1, body: body.subarray(0, 100) },
        { namespace: 'b', schemaVersion: 1, format: 'jsonl', rows: 1, body: body.subarray(100) },
      ],
    }
    const frames = encodeFrames(EPOCH, batch, 112)
    // Header: 8 epoch + 8 commit time + 4 + 3 offset + 2 + 2 × (2 + 1 + 17) = 65 bytes, leaving 31 of tail room.
    expect(frames.map((f) => f.length)).toEqual([112, 112, 12 + 50, 16 + 65])
    const decoded = frames.map((f) => decodeFrame(f, 'test'))
    expect(decoded.map((f) => (f.kind === 'data' ? f.index : `batch of ${f.frames}`))).toEqual([
      0,
      1,
      2,
      'batch of 4',
    ])
    const joined = Buffer.concat(decoded.map((f) => (f.kind === 'data' ? f.body : f.tail)))
    expect(joined.equals(body)).toBe(true)
  })

  it('stores a batch without parts or offset', () => {
    const [frame] = encodeFrames(EPOCH, { offset: undefined, parts: [] }, 1024)
    expect(frame!.toString('hex')).toBe(
      hex(`534b5742 02 01 0000 01000000 16000000 ${EPOCH} 00a8da769b010000 00000000 0000`).toString('hex'),
    )
    expect(decodeFrame(frame!, 'test')).toMatchObject({ offset: undefined, parts: [], tail: Buffer.alloc(0) })
  })

  it('rejects a frame from a newer format version with a clear error', () => {
    const newer = Buffer.from(ONE_FRAME)
    newer[4] = FORMAT_VERSION + 1
    expect(() => decodeFrame(newer, 'test')).toThrow(
      expect.objectContaining({
        code: 'WAL_FORMAT_UNSUPPORTED',
        message: expect.stringMatching(/version 3.*upgrade/),
      }),
    )
  })

  it('rejects bytes that are not a batch frame, and a truncated header', () => {
    expect(() => decodeFrame(text('{"not":"a frame"}'), 'slot x frame 3')).toThrow(
      expect.objectContaining({ code: 'WAL_CORRUPT', message: expect.stringContaining('slot x frame 3') }),
    )
    expect(() => decodeFrame(ONE_FRAME.subarray(0, 40), 'test')).toThrow(
      expect.objectContaining({ code: 'WAL_CORRUPT' }),
    )
    const badFormat = Buffer.from(ONE_FRAME)
    badFormat[16 + 8 + 8 + 4 + 7 + 2 + 2 + 7 + 4] = 9
    expect(() => decodeFrame(badFormat, 'test')).toThrow(expect.objectContaining({ code: 'WAL_CORRUPT' }))
  })

  it('refuses parts it cannot store, and a header larger than a frame', () => {
    const bad = (part: object) => () =>
      encodeFrames(EPOCH, { offset: 1, parts: [{ ...BATCH.parts[0]!, ...part }] }, 1024)
    expect(bad({ namespace: '' })).toThrow(expect.objectContaining({ code: 'WAL_BATCH_INVALID' }))
    expect(bad({ rows: -1 })).toThrow(expect.objectContaining({ code: 'WAL_BATCH_INVALID' }))
    expect(bad({ schemaVersion: 1.5 })).toThrow(expect.objectContaining({ code: 'WAL_BATCH_INVALID' }))
    expect(bad({ format: 'parquet' })).toThrow(expect.objectContaining({ code: 'WAL_BATCH_INVALID' }))
    expect(() => encodeFrames(EPOCH, { offset: 'x'.repeat(100), parts: [] }, 64)).toThrow(
      expect.objectContaining({ code: 'WAL_BATCH_INVALID', message: expect.stringContaining('offset') }),
    )
    expect(() => encodeFrames(EPOCH, { offset: { n: 1n } as never, parts: [] }, 1024)).toThrow(
      expect.objectContaining({ code: 'WAL_BATCH_INVALID' }),
    )
  })

  it('mints random 16-hex-digit epochs', () => {
    const a = mintEpoch()
    expect(isEpoch(a)).toBe(true)
    expect(mintEpoch()).not.toBe(a)
  })
})
