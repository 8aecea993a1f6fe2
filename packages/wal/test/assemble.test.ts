import { describe, expect, it } from 'vitest'
import { BatchAssembler } from '../src/assemble.js'
import type { BatchInput, BatchPart, WalBatch } from '../src/types.js'
import { encodeFrames } from './support/batches.js'

const EPOCH = 'feedfacecafebeef'
const FRAME_BYTES = 80

function batch(n: number, bodyBytes: number): { offset: { n: number }; parts: BatchPart[] } {
  const body = Buffer.alloc(bodyBytes, 0x30 + (n % 10))
  body[bodyBytes - 1] = 10
  return { offset: { n }, parts: [{ namespace: 'ns', schemaVersion: 1, format: 'csv', rows: 1, body }] }
}

const framesOf = (b: BatchInput) => encodeFrames(EPOCH, b, FRAME_BYTES)

/** Feeds frames numbered from FSN 1 and collects what comes out. */
function assemble(frames: Uint8Array[]): WalBatch[] {
  const assembler = new BatchAssembler('pipe', (fsn) => `frame ${fsn}`)
  const out: WalBatch[] = []
  frames.forEach((f, i) => {
    const b = assembler.push(BigInt(i + 1), f)
    if (b) out.push(b)
  })
  return out
}

describe('BatchAssembler', () => {
  it('yields one-frame and multi-frame batches whole, with the batch frame FSN as seq', () => {
    const a = framesOf(batch(1, 10))
    const b = framesOf(batch(2, 300))
    expect(a).toHaveLength(1)
    expect(b.length).toBeGreaterThan(3)
    const out = assemble([...a, ...b])
    expect(out.map((x) => [x.id.seq, x.offset, x.parts[0]!.body.length])).toEqual([
      [1n, { n: 1 }, 10],
      [BigInt(1 + b.length), { n: 2 }, 300],
    ])
    expect(Buffer.from(out[1]!.parts[0]!.body).equals(Buffer.from(batch(2, 300).parts[0]!.body))).toBe(true)
    expect(out[0]!.id).toEqual({ pipeline: 'pipe', epoch: EPOCH, seq: 1n })
  })

  it('drops the data frames of a commit that never finished', () => {
    const torn = framesOf(batch(1, 300)).slice(0, 2)
    const whole = framesOf(batch(2, 10))
    const multi = framesOf(batch(3, 300))
    const out = assemble([...torn, ...whole, ...torn, ...multi])
    expect(out.map((x) => x.offset)).toEqual([{ n: 2 }, { n: 3 }])
  })

  it('yields nothing for a log that ends inside a batch', () => {
    expect(assemble(framesOf(batch(1, 300)).slice(0, -1))).toEqual([])
  })

  it('reports frames in an impossible order as corruption', () => {
    const multi = framesOf(batch(1, 300))
    expect(() => assemble([multi[0]!, multi[2]!])).toThrow(expect.objectContaining({ code: 'WAL_CORRUPT' }))
    expect(() => assemble([multi[multi.length - 1]!])).toThrow(
      expect.objectContaining({ code: 'WAL_CORRUPT', message: expect.stringContaining('frame 1') }),
    )
  })
})
