import { describe, expect, it } from 'vitest'
import { LONE_RECORD_BYTES, privateCopy, RecentFrames } from '../src/recent-frames.js'
import { decodeClientMessage, loneDataMessage } from '../src/wire.js'

const copy = (n: number, fill = 1) => privateCopy(Buffer.alloc(n, fill))

/** Holds and offers a copy as frame `fsn`. */
function keep(recent: RecentFrames, fsn: bigint, payload: Uint8Array): void {
  expect(recent.hold(payload)).toBe(true)
  recent.offer(fsn, payload)
}

describe('privateCopy', () => {
  it('copies a payload; a large one into a DATA message of its own, sent without another copy', () => {
    for (const size of [1000, LONE_RECORD_BYTES]) {
      const payload = Buffer.alloc(size, 7)
      const copied = privateCopy(payload)
      payload.fill(0)
      expect(Buffer.from(copied).equals(Buffer.alloc(size, 7))).toBe(true)
      if (size < LONE_RECORD_BYTES) continue
      const message = loneDataMessage(copied, 9n)
      expect(message.buffer).toBe(copied.buffer)
      const decoded = decodeClientMessage(message)
      expect(decoded.type === 'data' && decoded.frames.map((f) => [f.fsn, f.payload.length])).toEqual([
        [9n, size],
      ])
    }
  })
})

describe('RecentFrames', () => {
  it('holds copies within its byte budget, counting ones whose append is still in flight', () => {
    const recent = new RecentFrames(10)
    const six = copy(6)
    expect(recent.hold(six)).toBe(true)
    expect(recent.hold(copy(5))).toBe(false)
    recent.release(six)
    expect(recent.hold(copy(10))).toBe(true)
  })

  it('yields consecutive frames from an FSN and stops at the first one it does not hold', () => {
    const recent = new RecentFrames(100)
    for (const fsn of [3n, 4n, 5n, 7n]) keep(recent, fsn, copy(1, Number(fsn)))
    expect([...recent.takeFrom(3n)].map((f) => [f.fsn, f.payload[0]])).toEqual([
      [3n, 3],
      [4n, 4],
      [5n, 5],
    ])
    expect(recent.has(3n)).toBe(false)
    expect(recent.has(7n)).toBe(true)
  })

  it('forgets frames below an FSN and gives their bytes back', () => {
    const recent = new RecentFrames(4)
    for (const fsn of [1n, 2n, 3n, 4n]) keep(recent, fsn, copy(1))
    expect(recent.hold(copy(1))).toBe(false)
    recent.dropBelow(4n)
    expect([1n, 2n, 3n].some((fsn) => recent.has(fsn))).toBe(false)
    expect([...recent.takeFrom(4n)].map((f) => f.payload.length)).toEqual([1])
    expect(recent.hold(copy(4))).toBe(true)
  })
})
