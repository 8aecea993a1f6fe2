import { describe, expect, it } from 'vitest'
import { backoffDelay } from '../src/backoff.js'

const policy = { initialMs: 100, maxMs: 5000 }

describe('backoffDelay', () => {
  it('doubles from the initial delay up to the cap (upper end of the jitter)', () => {
    const top = () => 1
    expect([1, 2, 3, 4, 5, 6, 7, 8, 50].map((a) => backoffDelay(policy, a, top))).toEqual([
      100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000,
    ])
  })

  it('jitters within the upper half of each step', () => {
    expect(backoffDelay(policy, 1, () => 0)).toBe(50)
    expect(backoffDelay(policy, 7, () => 0)).toBe(2500)
    for (let i = 0; i < 200; i++) {
      const d = backoffDelay(policy, 4)
      expect(d).toBeGreaterThanOrEqual(400)
      expect(d).toBeLessThanOrEqual(800)
    }
  })
})
