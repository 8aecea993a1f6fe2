import { describe, expect, it } from 'vitest'
import { addedFields, evolveSchema, widenFieldType } from '../src/schema.js'

describe('widenFieldType', () => {
  it('widens numbers along int → long → double, in either order', () => {
    expect(widenFieldType('int', 'long')).toBe('long')
    expect(widenFieldType('double', 'int')).toBe('double')
    expect(widenFieldType('long', 'long')).toBe('long')
  })
  it('widens date to timestamp and anything incompatible to string', () => {
    expect(widenFieldType('date', 'timestamp')).toBe('timestamp')
    expect(widenFieldType('boolean', 'int')).toBe('string')
    expect(widenFieldType('json', 'string')).toBe('string')
  })
})

describe('evolveSchema', () => {
  const saved = { namespace: 'rentals', fields: [{ name: 'id', type: 'int' as const }], primaryKey: ['id'] }

  it('returns the saved schema itself when nothing changed', () => {
    expect(evolveSchema(saved, { namespace: 'rentals', fields: [{ name: 'id', type: 'int' }] })).toBe(saved)
  })
  it('appends new fields and widens types, keeping field order and primary key', () => {
    const next = evolveSchema(saved, {
      namespace: 'rentals',
      fields: [
        { name: 'note', type: 'string' },
        { name: 'id', type: 'long' },
      ],
    })
    expect(next.fields).toEqual([
      { name: 'id', type: 'long' },
      { name: 'note', type: 'string' },
    ])
    expect(next.primaryKey).toEqual(['id'])
    expect(addedFields(saved, next).map((f) => f.name)).toEqual(['note'])
  })
})
