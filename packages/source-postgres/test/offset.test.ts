import { hasCode } from '@skippr/connector-api'
import { describe, expect, it } from 'vitest'
import { OFFSET_INVALID } from '../src/errors.js'
import { keyAfter, parsePositions, positionEntry, positionsOffset } from '../src/offset.js'

describe('source offset', () => {
  it('round-trips each table position as the named key of its last row', () => {
    const positions = parsePositions(undefined)
    positions.set('events', positionEntry(['updated_at', 'id'], ['2024-01-01 00:00:00+00', '7']))
    const offset = positionsOffset(positions)
    expect(offset).toEqual({
      tables: { events: { after: { updated_at: '2024-01-01 00:00:00+00', id: '7' } } },
    })
    const back = parsePositions(JSON.parse(JSON.stringify(offset)))
    expect(keyAfter(back.get('events'), 'events', ['updated_at', 'id'])).toEqual([
      '2024-01-01 00:00:00+00',
      '7',
    ])
    expect(keyAfter(back.get('other'), 'other', ['id'])).toBeUndefined()
  })

  it.each([
    ['not an object', 42],
    ['no tables', { table: {} }],
  ])('refuses an offset with %s', (_, offset) => {
    expect(() => parsePositions(offset)).toThrow(expect.objectContaining({ code: OFFSET_INVALID }))
  })

  it('refuses a position saved under other key columns or with a non-text value', () => {
    const error = (() => {
      try {
        keyAfter({ after: { id: '1' } }, 'orders', ['seq'])
      } catch (e) {
        return e
      }
    })()
    expect(hasCode(error, OFFSET_INVALID)).toBe(true)
    expect(() => keyAfter({ after: { id: 1 } }, 'orders', ['id'])).toThrow('is not a string')
  })
})
