import { describe, expect, it } from 'vitest'
import { safeName } from '../src/index.js'

describe('safe names', () => {
  it('encodes unsafe characters, % and a leading dot, so names stay distinct and inside their directory or key segment', () => {
    expect(safeName('Order "Lines" x')).toBe('Order %22Lines%22 x')
    expect(safeName('../etc/passwd')).toBe('%2E.%2Fetc%2Fpasswd')
    expect(safeName('50%')).toBe('50%25')
    expect(safeName('東京')).toBe('東京')
  })
})
