import { describe, expect, it } from 'vitest'
import { canonicalValue, parseCsvWithHeader } from '../src/index.js'

describe('parseCsvWithHeader', () => {
  it('keys records by a header row', () => {
    expect(parseCsvWithHeader('id,"two words"\n1,"x"\n')).toEqual([{ id: '1', 'two words': 'x' }])
  })
})

describe('canonicalValue', () => {
  it('gives one form whatever shape the driver returns', () => {
    expect(canonicalValue(5n, 'long')).toBe(canonicalValue('5', 'long'))
    expect(canonicalValue(new Date('2024-01-02T03:04:05.006Z'), 'timestamp')).toBe(
      canonicalValue('2024-01-02 03:04:05.006+00', 'timestamp'),
    )
    expect(canonicalValue('{"b":1,"a":[2]}', 'json')).toBe(canonicalValue({ a: [2], b: 1 }, 'json'))
    expect(canonicalValue(new Date('2024-01-02T00:00:00Z'), 'date')).toBe('2024-01-02')
  })
})
