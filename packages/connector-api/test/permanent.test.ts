import { describe, expect, it } from 'vitest'
import { isPermanent, permanent, SkipprError } from '../src/errors.js'

describe('permanent', () => {
  it('marks an error, and only that error, as one no retry can fix', () => {
    const refused = permanent(new SkipprError('SKIPPR_X', 'column "name" exists'))
    expect(isPermanent(refused)).toBe(true)
    expect(refused.message).toBe('column "name" exists')
    expect(isPermanent(new Error('connection reset'))).toBe(false)
    expect(isPermanent('text')).toBe(false)
    expect(isPermanent(undefined)).toBe(false)
  })

  it('is recognised across copies of this package: the mark is a registered symbol', () => {
    const error = new Error('refused')
    Object.defineProperty(error, Symbol.for('skippr.permanent'), { value: true })
    expect(isPermanent(error)).toBe(true)
  })
})
