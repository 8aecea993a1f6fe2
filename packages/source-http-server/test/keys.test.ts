import { describe, expect, it } from 'vitest'
import { IdempotencyKeys } from '../src/keys.js'

const options = { windowMs: 1000, maxKeys: 3 }

describe('IdempotencyKeys', () => {
  it('holds a key in the state from its request on, with when it arrived', () => {
    const keys = new IdempotencyKeys(options)
    keys.begin('a', 100)
    keys.begin('b', 200)
    expect(keys.state(300)).toEqual([
      ['a', 100],
      ['b', 200],
    ])
  })

  it('answers a restored key as committed, with no rows', async () => {
    const keys = new IdempotencyKeys(options, [['a', 100]])
    expect(await keys.outcome('a', 200)).toBe(0)
    expect(keys.outcome('b', 200)).toBeUndefined()
  })

  it('forgets keys older than the window and beyond the most kept, oldest first', () => {
    const keys = new IdempotencyKeys(options)
    for (const [key, at] of [
      ['a', 0],
      ['b', 600],
      ['c', 700],
      ['d', 800],
    ] as const)
      keys.begin(key, at)
    expect(keys.state(900).map(([key]) => key)).toEqual(['b', 'c', 'd'])
    expect(keys.state(1650).map(([key]) => key)).toEqual(['c', 'd'])
  })

  it('forgets the key of a failed push, and a request waiting on it hears the failure', async () => {
    const keys = new IdempotencyKeys(options)
    const pending = keys.begin('a', 0)
    const waiting = keys.outcome('a', 1)
    pending.fail(new Error('not committed'))
    await expect(waiting).rejects.toThrow('not committed')
    expect(keys.outcome('a', 2)).toBeUndefined()
    expect(keys.state(2)).toEqual([])
  })

  it('a committed key answers a later request with the rows it committed', async () => {
    const keys = new IdempotencyKeys(options)
    keys.begin('a', 0).done(7)
    expect(await keys.outcome('a', 1)).toBe(7)
  })
})
