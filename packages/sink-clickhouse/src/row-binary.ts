/**
 * Rows in ClickHouse's RowBinary format. 18.16's text parser reads many doubles one bit off (about
 * one random double in five, and subnormals such as 5e-324 as 0), so values cross as their binary
 * form: a double as its 8 bytes, integers little-endian, strings as UTF-8 with a LEB128 length,
 * `Nullable` as a null byte before the value. Each value is checked against its column first; one a
 * column cannot hold exactly is returned as the reason, never altered.
 */
import type { FieldType } from '@skippr/connector-api'
import { BOOLEAN_TYPE, type ColumnType } from './column-types.js'
import { SAFE_INTEGER_TEXT, shortDecimal, shortInteger } from './number-bytes.js'
import type { Cell } from './part-records.js'

export interface TargetColumn {
  readonly name: string
  readonly type: ColumnType
  readonly nullable: boolean
  /** The type of the part's field, when it differs from what the column was made for (a long in a Float64 column). */
  readonly field: FieldType
}

const INTEGER = /^-?\d+$/
const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/
/** How sources write the doubles JSON has no number for (`csvValue` of NaN and the infinities). */
const SPECIAL_DOUBLES = new Map<string, number>([
  ['NaN', Number.NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
])
/** Strings up to this many bytes are copied a byte at a time. */
const SHORT_COPY = 32
/** Keeps a U+FEFF that starts a value: it is part of the value's text, not a byte order mark. */
const decoder = new TextDecoder('utf-8', { ignoreBOM: true })
const TWO_32 = 2 ** 32
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
const INT_RANGE = {
  Int32: [-(2n ** 31n), 2n ** 31n - 1n],
  Int64: [-(2n ** 63n), 2n ** 63n - 1n],
} as const

/** A growing buffer of RowBinary values. */
export class RowBinaryWriter {
  private buffer: Buffer
  private length = 0

  /** `expectedBytes`: about what the rows will take, so the buffer rarely grows. */
  constructor(expectedBytes = 64 * 1024) {
    this.buffer = Buffer.allocUnsafe(Math.max(1024, expectedBytes))
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.length)
  }

  /** Appends `cell` as a value of `column`; returns why the column cannot hold it, if it cannot. */
  value(column: TargetColumn, cell: Cell): string | undefined {
    if (cell === null) return this.null(column)
    this.notNull(column)
    return this.typed(column, cell)
  }

  /**
   * Appends the non-null value whose text is the UTF-8 `bytes[start, end)` as it stands (no escape
   * or doubled quote in it), as `value` would append that text: a string's bytes are copied, an
   * integer or short decimal is read from its digits (number-bytes.ts), and only any other text is
   * decoded and read as `value` reads it.
   */
  valueOfBytes(column: TargetColumn, bytes: Uint8Array, start: number, end: number): string | undefined {
    this.notNull(column)
    switch (column.type) {
      case 'Int32':
      case 'Int64': {
        const value = shortInteger(bytes, start, end)
        if (value !== undefined) return this.safeInteger(column.type, value)
        break
      }
      case 'Float64': {
        const value = shortDecimal(bytes, start, end)
        if (value === undefined) break
        this.room(8)
        this.length = this.buffer.writeDoubleLE(value, this.length)
        return undefined
      }
      case 'String':
        this.stringBytes(bytes, start, end)
        return undefined
    }
    return this.typed(column, decoder.decode(bytes.subarray(start, end)))
  }

  /** Appends NULL; returns why not when the column is part of the key, and so not Nullable. */
  null(column: TargetColumn): string | undefined {
    if (!column.nullable) return 'is NULL, and the column is part of the table key'
    this.room(1)
    this.buffer[this.length++] = 1
    return undefined
  }

  /** The Nullable marker of a value that is not NULL. */
  private notNull(column: TargetColumn): void {
    if (!column.nullable) return
    this.room(1)
    this.buffer[this.length++] = 0
  }

  private typed(column: TargetColumn, cell: string): string | undefined {
    switch (column.type) {
      case 'Int32':
      case 'Int64':
        return this.integer(column.type, cell)
      case 'Float64':
        return this.double(cell, column.field)
      case BOOLEAN_TYPE:
        if (cell !== 'true' && cell !== 'false') return 'is not a boolean (true or false)'
        this.room(1)
        this.buffer[this.length++] = cell === 'true' ? 1 : 0
        return undefined
      case 'String':
        return this.string(cell)
    }
  }

  /** A String value encoded once (`encodedString`), appended as it is: the batch column of every row. */
  encoded(value: Uint8Array): void {
    this.room(value.length)
    this.buffer.set(value, this.length)
    this.length += value.length
  }

  /** Appends a non-null String value. */
  string(text: string): string | undefined {
    if (LONE_SURROGATE.test(text)) return 'holds a lone UTF-16 surrogate, which UTF-8 cannot hold'
    const size = Buffer.byteLength(text)
    this.room(size + 5)
    this.size(size)
    this.length += this.buffer.write(text, this.length)
    return undefined
  }

  /** Appends the String value whose UTF-8 bytes are `bytes[start, end)`. */
  private stringBytes(bytes: Uint8Array, start: number, end: number): void {
    const size = end - start
    this.room(size + 5)
    this.size(size)
    // Most values are a few bytes: copying them one by one beats making a subarray for `set`.
    if (size > SHORT_COPY) this.buffer.set(bytes.subarray(start, end), this.length)
    else for (let i = 0; i < size; i++) this.buffer[this.length + i] = bytes[start + i] as number
    this.length += size
  }

  /** A String's length as LEB128; the caller has made room for it. */
  private size(bytes: number): void {
    let rest = bytes
    while (rest >= 0x80) {
      this.buffer[this.length++] = (rest & 0x7f) | 0x80
      rest >>>= 7
    }
    this.buffer[this.length++] = rest
  }

  private integer(type: 'Int32' | 'Int64', cell: string): string | undefined {
    if (!INTEGER.test(cell)) return `is not an integer (${type})`
    if (cell.length < SAFE_INTEGER_TEXT) return this.safeInteger(type, Number(cell))
    const value = BigInt(cell)
    const [min, max] = INT_RANGE[type]
    if (value < min || value > max) return `is out of the range of ${type}`
    this.room(8)
    if (type === 'Int32') this.length = this.buffer.writeInt32LE(Number(value), this.length)
    else this.length = this.buffer.writeBigInt64LE(value, this.length)
    return undefined
  }

  /** An integer a double holds exactly, written without a BigInt. */
  private safeInteger(type: 'Int32' | 'Int64', value: number): string | undefined {
    this.room(8)
    if (type === 'Int32') {
      if (value < -(2 ** 31) || value > 2 ** 31 - 1) return `is out of the range of ${type}`
      this.length = this.buffer.writeInt32LE(value, this.length)
      return undefined
    }
    // Two's complement in two halves: floor keeps the high half right for negative values.
    const high = Math.floor(value / TWO_32)
    this.length = this.buffer.writeUInt32LE(value - high * TWO_32, this.length)
    this.length = this.buffer.writeInt32LE(high, this.length)
    return undefined
  }

  private double(cell: string, field: FieldType): string | undefined {
    const special = SPECIAL_DOUBLES.get(cell)
    if (special === undefined && !NUMBER.test(cell)) return 'is not a number (Float64)'
    const value = special ?? Number(cell)
    if (special === undefined && !Number.isFinite(value)) return 'is beyond the range of Float64'
    if (value === 0 && /[1-9]/.test(cell.split(/[eE]/)[0] ?? ''))
      return 'is too small for Float64 (it would be 0)'
    // A long's value must be a double exactly, not the nearest one (a double's text is its shortest form).
    if (field === 'long' && INTEGER.test(cell) && BigInt(value) !== BigInt(cell))
      return 'is not exactly a Float64'
    this.room(8)
    this.length = this.buffer.writeDoubleLE(value, this.length)
    return undefined
  }

  private room(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + bytes))
    this.buffer.copy(grown, 0, 0, this.length)
    this.buffer = grown
  }
}

/** A String value as RowBinary bytes (LEB128 length, UTF-8), for a value written on every row. */
export function encodedString(text: string): Uint8Array {
  const writer = new RowBinaryWriter(Buffer.byteLength(text) + 5)
  writer.string(text)
  return writer.bytes()
}
