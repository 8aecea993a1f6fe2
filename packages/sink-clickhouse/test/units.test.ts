import { parseConnectorConfig } from '@skippr/connector-api'
import { expect, it } from 'vitest'
import { sink, supportsDeduplicationToken } from '../src/index.js'
import { RowBinaryWriter } from '../src/row-binary.js'
import { quoteName, quoteString } from '../src/sql.js'

it('passes insert_deduplication_token from server 22.2 on', () => {
  const decisions = ['18.16.1', '21.12.4', '22.1.3', '22.2.1', '22.10.2', '23.3.1', '24.1'].map((v) => [
    v,
    supportsDeduplicationToken(v.split('.').map(Number)),
  ])
  expect(Object.fromEntries(decisions)).toEqual({
    '18.16.1': false,
    '21.12.4': false,
    '22.1.3': false,
    '22.2.1': true,
    '22.10.2': true,
    '23.3.1': true,
    '24.1': true,
  })
})

it('is the Clickhouse sink: at-least-once, password secret, defaults filled in', () => {
  expect({ type: sink.type, guarantee: sink.guarantee, secret: sink.secretFields }).toEqual({
    type: 'Clickhouse',
    guarantee: 'at-least-once',
    secret: ['password'],
  })
  const at = { file: 'skippr.yml', path: 'data_sinks.ch.Clickhouse' }
  expect(parseConnectorConfig(sink, { url: 'http://ch:8123' }, at)).toEqual({
    url: 'http://ch:8123',
    database: 'default',
    username: 'default',
    engine: 'MergeTree',
    zookeeper_path: '/clickhouse/tables/{shard}/{database}/{table}',
    replica: '{replica}',
    settings: {},
  })
  expect(() => parseConnectorConfig(sink, { url: 'http://ch:8123', engine: 'Log' }, at)).toThrow(
    'data_sinks.ch.Clickhouse.engine',
  )
  expect(() => parseConnectorConfig(sink, { url: 'http://u:pw@ch:8123' }, at)).toThrow(
    'data_sinks.ch.Clickhouse.url: the url holds a user or password',
  )
})

it('quotes names and strings with backslash escapes', () => {
  expect(quoteName('a`b\\c "d"')).toBe('`a\\`b\\\\c "d"`')
  expect(quoteString("it's \\")).toBe("'it\\'s \\\\'")
})

it("writes every integer as its two's complement bytes, short ones without a BigInt alike", () => {
  const int64 = (cell: string) => {
    const writer = new RowBinaryWriter()
    expect(writer.value({ name: 'n', type: 'Int64', nullable: false, field: 'long' }, cell)).toBeUndefined()
    return Buffer.from(writer.bytes())
  }
  const expected = (cell: string) => {
    const bytes = Buffer.alloc(8)
    bytes.writeBigInt64LE(BigInt(cell))
    return bytes
  }
  const cells = ['0', '-0', '1', '-1', '4294967295', '4294967296', '-4294967296', '-4294967297', '2147483648']
  cells.push(
    '999999999999999',
    '-999999999999999',
    '9007199254740993',
    '-9223372036854775808',
    '9223372036854775807',
  )
  for (const cell of cells) expect(int64(cell), cell).toEqual(expected(cell))
  const int32 = new RowBinaryWriter()
  const column = { name: 'n', type: 'Int32', nullable: false, field: 'int' } as const
  expect(int32.value(column, '-2147483648')).toBeUndefined()
  expect(int32.value(column, '2147483648')).toBe('is out of the range of Int32')
  expect(Buffer.from(int32.bytes())).toEqual(Buffer.from([0, 0, 0, 0x80]))
})
