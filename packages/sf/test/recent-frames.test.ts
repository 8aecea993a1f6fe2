import { describe, expect, it } from 'vitest'
import { RecentFrames } from '../src/recent-frames.js'

const bytes = (n: number, fill = 1): Buffer => Buffer.alloc(n, fill)

describe('RecentFrames', () => {
  it('holds private copies within its byte budget, counting copies whose append is still in flight', () => {
    const recent = new RecentFrames(10)
    const payload = bytes(6)
    const copy = recent.hold(payload)!
    payload.fill(9)
    expect([...copy]).toEqual([1, 1, 1, 1, 1, 1])
    expect(recent.hold(bytes(5))).toBeUndefined()
    recent.release(copy)
    expect(recent.hold(bytes(10))).toBeDefined()
  })

  it('yields consecutive frames from an FSN and stops at the first one it does not hold', () => {
    const recent = new RecentFrames(100)
    for (const fsn of [3n, 4n, 5n, 7n]) recent.offer(fsn, recent.hold(bytes(1, Number(fsn)))!)
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
    for (const fsn of [1n, 2n, 3n, 4n]) recent.offer(fsn, recent.hold(bytes(1))!)
    expect(recent.hold(bytes(1))).toBeUndefined()
    recent.dropBelow(4n)
    expect([1n, 2n, 3n].some((fsn) => recent.has(fsn))).toBe(false)
    expect(recent.take(4n)?.length).toBe(1)
    expect(recent.hold(bytes(4))).toBeDefined()
  })
})
