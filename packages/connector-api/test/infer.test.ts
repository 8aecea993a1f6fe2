import { describe, expect, it } from 'vitest'
import { csvValueType, FieldTypes, jsonValueType } from '../src/infer.js'

describe('csvValueType', () => {
  it.each([
    ['42', 'int'],
    ['-2147483648', 'int'],
    ['2147483648', 'long'],
    ['+7', 'int'],
    ['9223372036854775807', 'long'],
    ['9223372036854775808', 'string'],
    ['007', 'string'],
    ['0', 'int'],
    ['3.25', 'double'],
    ['-1e6', 'double'],
    ['.5', 'double'],
    ['0.5', 'double'],
    ['true', 'boolean'],
    ['FALSE', 'boolean'],
    ['2024-02-29', 'date'],
    ['2023-02-29', 'string'],
    ['2024-01-01T08:15:00Z', 'timestamp'],
    ['2024-01-01 08:15:00.123+01:00', 'timestamp'],
    ['2024-01-01T08:15', 'timestamp'],
    ['2024-01-01T08:15:00.123456Z', 'timestamp'],
    ['2024-01-01T08:15:00.1234567Z', 'string'], // more than microseconds: no sink keeps them
    ['2024-13-01T08:15:00Z', 'string'],
    ['', 'string'],
    ['hello', 'string'],
  ] as const)('%j is %s', (value, type) => {
    expect(csvValueType(value)).toBe(type)
  })

  it('gives no type for NULL (an unquoted empty field)', () => {
    expect(csvValueType(null)).toBeUndefined()
  })
})

describe('jsonValueType', () => {
  it.each([
    ['1', 'int'],
    ['-0', 'int'],
    ['2147483647', 'int'],
    ['2147483648', 'long'],
    ['1099511627776', 'long'],
    ['9007199254740993', 'long'],
    ['9223372036854775807', 'long'],
    ['-9223372036854775808', 'long'],
    ['9223372036854775808', 'string'],
    ['-9223372036854775809', 'string'],
    ['123456789012345678901234567890', 'string'],
    ['1.5', 'double'],
    ['1.0', 'double'],
    ['-0.0', 'double'],
    ['1e2', 'double'],
    ['1E-7', 'double'],
    ['1e308', 'double'],
    ['1e400', 'string'],
    ['-1e400', 'string'],
    ['true', 'boolean'],
    ['false', 'boolean'],
    ['"2024-01-01"', 'date'],
    ['"2024-01-01T00:00:00Z"', 'timestamp'],
    ['"2024\u002d01-01"', 'date'],
    ['"x"', 'string'],
    ['"a\u0000b"', 'string'],
    ['"12"', 'string'],
    ['{"a": 1}', 'json'],
    ['[1, 2]', 'json'],
  ] as const)('%s is %s', (text, type) => {
    expect(jsonValueType(text)).toBe(type)
  })

  it('gives no type for null', () => {
    expect(jsonValueType('null')).toBeUndefined()
  })
})

describe('FieldTypes', () => {
  it('keeps first-seen order and widens over values; a field seen only as null is a string', () => {
    const types = new FieldTypes()
    types.add('id', 'int')
    types.add('note', undefined)
    types.add('id', 'long')
    types.add('at', 'date')
    types.add('at', 'timestamp')
    types.add('id', 'double')
    types.add('flag', 'boolean')
    types.add('flag', 'int')
    expect(types.fields()).toEqual([
      { name: 'id', type: 'double' },
      { name: 'note', type: 'string' },
      { name: 'at', type: 'timestamp' },
      { name: 'flag', type: 'string' },
    ])
    expect(types.fields(true).map((f) => f.name)).toEqual(['id', 'at', 'flag'])
  })

  it('makes a key that holds nested values beside others json, whatever came first', () => {
    const types = new FieldTypes()
    for (const type of ['boolean', 'json', 'double', 'string'] as const) types.add('j', type)
    for (const type of ['string', 'json'] as const) types.add('k', type)
    expect(types.fields()).toEqual([
      { name: 'j', type: 'json' },
      { name: 'k', type: 'json' },
    ])
  })
})
