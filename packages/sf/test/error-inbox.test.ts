import { afterEach, describe, expect, it, vi } from 'vitest'
import { defaultErrorHandler, ErrorInbox } from '../src/error-inbox.js'
import { SenderServerError } from '../src/errors.js'
import { newCounters } from '../src/sender-counters.js'

afterEach(() => {
  vi.restoreAllMocks()
})

const until = async (check: () => boolean): Promise<void> => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5))
}

describe('error inbox', () => {
  it('delivers in order, outside the caller, and counts deliveries', async () => {
    const counters = newCounters()
    const seen: string[] = []
    const inbox = new ErrorInbox(8, (e) => void seen.push(e.message), counters)
    const a = new Error('a')
    inbox.post(a)
    inbox.post(new Error('b'))
    expect(seen).toEqual([]) // not on the poster's call stack
    await until(() => seen.length === 2)
    expect(seen).toEqual(['a', 'b'])
    expect(inbox.wasDelivered(a)).toBe(true)
    expect(counters.totalErrorNotificationsDelivered).toBe(2)
  })

  it('counts notifications that do not fit, and those still queued when it settles', async () => {
    const counters = newCounters()
    let release!: () => void
    const inbox = new ErrorInbox(2, () => new Promise<void>((resolve) => (release = resolve)), counters)
    for (const m of ['1', '2', '3', '4', '5']) inbox.post(new Error(m))
    expect(counters.droppedErrorNotifications).toBe(3)
    await until(() => release !== undefined)
    await inbox.settle(20) // '1' is in the handler, '2' is queued
    expect(counters.droppedErrorNotifications).toBe(4)
    release()
  })

  it('keeps going when the handler throws, and logs that', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    const counters = newCounters()
    const inbox = new ErrorInbox(
      4,
      (e) => {
        if (e.message === 'x') throw new Error('handler bug')
      },
      counters,
    )
    inbox.post(new Error('x'))
    inbox.post(new Error('y'))
    await until(() => counters.totalErrorNotificationsDelivered === 2)
    expect(String(logged.mock.calls[0])).toMatch(/the error handler threw while handling "x": handler bug/)
  })

  it('logs HALT at error level and DROP at warn level by default', () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    defaultErrorHandler(new SenderServerError('HALT', 3n, 'stop'))
    defaultErrorHandler(new SenderServerError('DROP', 4n, 'skip'))
    expect(String(error.mock.calls[0])).toMatch(/receiver halted the sender at FSN 3: stop/)
    expect(String(warn.mock.calls[0])).toMatch(/receiver dropped frame FSN 4: skip/)
  })
})
