import { describe, expect, it } from 'vitest'
import { IdempotencyKeys, type KeyState } from '../src/keys.js'

/** A state as the committed offset holds it. */
const written = (state: KeyState): KeyState => JSON.parse(JSON.stringify(state))

const options = { windowMs: 1000, maxKeys: 3 }

describe('IdempotencyKeys', () => {
  it('holds a key in the state from its request on, with when it arrived', () => {
    const keys = new IdempotencyKeys(options)
    keys.begin('a', 100)
    keys.begin('b', 200)
    expect(written(keys.state(300))).toEqual([
      ['a', 100],
      ['b', 200],
    ])
  })

  it('a state written after later keys began lists only the keys begun up to its push', () => {
    const keys = new IdempotencyKeys({ windowMs: 1000, maxKeys: 10 }, [['restored', 50]])
    keys.begin('a', 100).done(1)
    const atA = keys.state(150)
    keys.begin('b', 200)
    const atB = keys.state(250)
    keys.begin('c', 300).fail(new Error('not committed'))
    keys.begin('c', 400)
    // Written late, as the WAL writes a commit's offset: b and the retried c began after a's push.
    expect(written(atA)).toEqual([
      ['restored', 50],
      ['a', 100],
    ])
    expect(written(atB).map(([key]) => key)).toEqual(['restored', 'a', 'b'])
    expect(written(keys.state(450)).map(([key]) => key)).toEqual(['restored', 'a', 'b', 'c'])
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
    expect(written(keys.state(900)).map(([key]) => key)).toEqual(['b', 'c', 'd'])
    expect(written(keys.state(1650)).map(([key]) => key)).toEqual(['c', 'd'])
  })

  it('forgets the key of a failed push, and a request waiting on it hears the failure', async () => {
    const keys = new IdempotencyKeys(options)
    const pending = keys.begin('a', 0)
    const waiting = keys.outcome('a', 1)
    pending.fail(new Error('not committed'))
    await expect(waiting).rejects.toThrow('not committed')
    expect(keys.outcome('a', 2)).toBeUndefined()
    expect(written(keys.state(2))).toEqual([])
  })

  it('a committed key answers a later request with the rows it committed', async () => {
    const keys = new IdempotencyKeys(options)
    keys.begin('a', 0).done(7)
    expect(await keys.outcome('a', 1)).toBe(7)
  })
})
