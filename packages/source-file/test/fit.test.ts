import { type FieldType, jsonValueType, widenFieldType } from '@skippr/connector-api'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { checkOf, fits } from '../src/fit.js'

const runs = Number(process.env.SKIPPR_PROPERTY_RUNS ?? 200)
const fitsText = (text: string, type: FieldType) => {
  const bytes = new TextEncoder().encode(text)
  return fits(bytes, 0, bytes.length, checkOf(type))
}

describe('fits', () => {
  it.each([
    ['int', ' 123456789 ', true],
    ['int', '-0', true],
    ['int', 'null', true],
    ['int', '1234567890', false],
    ['int', '1.5', false],
    ['int', '1e2', false],
    ['int', '"7"', false],
    ['int', 'true', false],
    ['long', '123456789012345678', true],
    ['long', '9223372036854775807', false],
    ['double', '-0.0', true],
    ['double', '12', true],
    ['double', '1.5e-07', true],
    ['double', '1e400', false],
    ['double', '1e99', true],
    ['double', '"1.5"', false],
    ['boolean', 'false', true],
    ['boolean', '1', false],
    ['boolean', '"yes"', false],
    ['date', '"2020-01-02"', true],
    ['date', '"2020-01-02 10:30:00"', false],
    ['date', '"01/02/2020"', false],
    ['timestamp', '"2020-01-02"', true],
    ['timestamp', '"2020-01-02T10:30:00.5+01:00"', true],
    ['timestamp', '"2020-01-02 10:30"', true],
    ['timestamp', '"2020-01-02T10:30:00.123456Z"', true],
    ['timestamp', '"2020-01-02T10:30:00.1234567Z"', false],
    ['timestamp', '"Jan 2 2020"', false],
    ['timestamp', '5', false],
    ['string', '1.5', true],
    ['json', '{"a":1}', true],
  ] as const)('a %s column: %s fits: %s', (type, text, expected) => {
    expect(fitsText(text, type)).toBe(expected)
  })

  it('passes no value whose own type would widen a watched column (property)', () => {
    const types = ['int', 'long', 'double', 'boolean', 'date', 'timestamp'] as const
    const values = fc.oneof(
      fc.bigInt().map(String),
      fc.double().filter(Number.isFinite).map(String),
      fc.constantFrom('1e400', '-0', '1.0', '2147483648', '9223372036854775808', 'true', 'null'),
      fc.date({ noInvalidDate: true }).map((d) => JSON.stringify(d.toISOString())),
      fc.date({ noInvalidDate: true }).map((d) => JSON.stringify(d.toISOString().slice(0, 10))),
      fc.jsonValue().map((v) => JSON.stringify(v)),
    )
    fc.assert(
      fc.property(fc.constantFrom(...types), values, (type, text) => {
        const own = jsonValueType(text)
        if (own !== undefined && fitsText(text, type)) expect(widenFieldType(type, own)).toBe(type)
      }),
      { numRuns: runs * 5 },
    )
  })
})
