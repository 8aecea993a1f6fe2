import { describe, expect, it } from 'vitest'
import { describeTarget } from '../src/redact.js'

describe('describeTarget', () => {
  it('keeps user, host and database but never the password or query', () => {
    const target = describeTarget(
      'postgres://app:s3cr%40t@db.internal:5432/orders?sslmode=require&password=x',
    )
    expect(target).toBe('postgres://app@db.internal:5432/orders')
    expect(target).not.toContain('s3cr')
  })
  it('does not echo keyword/value connection strings at all', () => {
    expect(describeTarget('host=db password=hunter22')).toBe('the configured server')
  })
})
