import { connect } from 'node:net'
import { describe, expect, it } from 'vitest'
import { hasNetworkCode } from '../src/index.js'

describe('hasNetworkCode', () => {
  it('is true for a refused connection, as Node reports it', async () => {
    const error = await new Promise<Error>((resolve) => connect(1, '127.0.0.1').on('error', resolve))
    expect(hasNetworkCode(error)).toBe(true)
  })

  it('is false for other codes, errors without one, and non-errors', () => {
    expect(hasNetworkCode(Object.assign(new Error('x'), { code: 'EACCES' }))).toBe(false)
    expect(hasNetworkCode(new Error('ECONNREFUSED in the text only'))).toBe(false)
    expect(hasNetworkCode(undefined)).toBe(false)
    expect(hasNetworkCode('ECONNRESET')).toBe(false)
  })
})
