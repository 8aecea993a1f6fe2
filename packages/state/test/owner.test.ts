import { hostname } from 'node:os'
import { describe, expect, it } from 'vitest'
import { isLocalOwnerGone, localOwnerId } from '../src/owner.js'

describe('isLocalOwnerGone', () => {
  it('is false for this live process and true for a PID that does not exist on this host', () => {
    expect(isLocalOwnerGone(localOwnerId())).toBe(false)
    expect(isLocalOwnerGone(`skipprd ${hostname()}:4194304:abcd`)).toBe(true)
  })
  it('never claims an owner on another host or in an unknown format is gone', () => {
    expect(isLocalOwnerGone('skipprd some-other-host:4194304:abcd')).toBe(false)
    expect(isLocalOwnerGone('first')).toBe(false)
  })
})
