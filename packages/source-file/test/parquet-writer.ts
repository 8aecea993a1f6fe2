/**
 * A minimal Parquet writer for shapes DuckDB does not write: INT96 timestamps, legacy repeated
 * primitives without a LIST group, a data page v2 with an empty compressed section, a footer whose
 * row count disagrees with its row group. One column, one row group, one PLAIN data page, levels as
 * RLE runs of one value each. Field ids and enum values are those of the Parquet format's
 * parquet.thrift, in Thrift's compact protocol.
 */
import { writeFile } from 'node:fs/promises'

export const PHYSICAL = { BOOLEAN: 0, INT32: 1, INT64: 2, INT96: 3, DOUBLE: 5, BYTE_ARRAY: 6 } as const
export const REPETITION = { REQUIRED: 0, OPTIONAL: 1, REPEATED: 2 } as const
export const CONVERTED = { UTF8: 0, LIST: 3 } as const
const CODEC = { UNCOMPRESSED: 0, SNAPPY: 1 } as const
const PLAIN = 0
const RLE = 3
const DATA_PAGE = 0
const DATA_PAGE_V2 = 3

export interface SchemaNode {
  readonly name: string
  readonly repetition: number
  /** A leaf's physical type; a group has `children` instead. */
  readonly type?: number
  readonly converted?: number
  readonly children?: readonly SchemaNode[]
}

export interface OneColumnFile {
  /** The top-level column (a leaf, or a group down to one leaf). */
  readonly column: SchemaNode
  /** Per value slot: repetition and definition levels, as the Dremel encoding has them. */
  readonly repetitionLevels: readonly number[]
  readonly definitionLevels: readonly number[]
  /** The PLAIN bytes of the defined values. */
  readonly values: Uint8Array
  readonly rows: number
  /** The footer's row count, when it is to differ from the row group's. */
  readonly footerRows?: number
  /** A v2 data page, snappy-flagged, whose values section is empty (it must hold no value). */
  readonly emptyCompressedV2?: boolean
}

export async function writeOneColumnParquet(path: string, file: OneColumnFile): Promise<void> {
  const leafPath: SchemaNode[] = []
  for (let node: SchemaNode | undefined = file.column; node; node = node.children?.[0]) leafPath.push(node)
  const leaf = leafPath.at(-1) as SchemaNode
  const maxRep = leafPath.filter((n) => n.repetition === REPETITION.REPEATED).length
  const maxDef = leafPath.filter((n) => n.repetition !== REPETITION.REQUIRED).length
  const rep = levels(file.repetitionLevels, maxRep)
  const def = levels(file.definitionLevels, maxDef)
  const slots = file.definitionLevels.length
  const codec = file.emptyCompressedV2 ? CODEC.SNAPPY : CODEC.UNCOMPRESSED
  let page: Uint8Array
  if (file.emptyCompressedV2) {
    const nulls = file.definitionLevels.filter((d) => d < maxDef).length
    page = concat(
      struct([
        [1, 'i32', DATA_PAGE_V2],
        [2, 'i32', rep.length + def.length],
        [3, 'i32', rep.length + def.length],
        [
          8,
          'struct',
          struct([
            [1, 'i32', slots],
            [2, 'i32', nulls],
            [3, 'i32', file.rows],
            [4, 'i32', PLAIN],
            [5, 'i32', def.length],
            [6, 'i32', rep.length],
            [7, 'bool', true],
          ]),
        ],
      ]),
      rep,
      def,
    )
  } else {
    const body = concat(withLength(rep), withLength(def), file.values)
    const header = struct([
      [1, 'i32', DATA_PAGE],
      [2, 'i32', body.length],
      [3, 'i32', body.length],
      [
        5,
        'struct',
        struct([
          [1, 'i32', slots],
          [2, 'i32', PLAIN],
          [3, 'i32', RLE],
          [4, 'i32', RLE],
        ]),
      ],
    ])
    page = concat(header, body)
  }
  const pageOffset = 4n
  const columnMeta = struct([
    [1, 'i32', leaf.type ?? 0],
    [2, 'list<i32>', [PLAIN, RLE]],
    [3, 'list<binary>', leafPath.map((n) => text(n.name))],
    [4, 'i32', codec],
    [5, 'i64', BigInt(slots)],
    [6, 'i64', BigInt(page.length)],
    [7, 'i64', BigInt(page.length)],
    [9, 'i64', pageOffset],
  ])
  const rowGroup = struct([
    [
      1,
      'list<struct>',
      [
        struct([
          [2, 'i64', pageOffset],
          [3, 'struct', columnMeta],
        ]),
      ],
    ],
    [2, 'i64', BigInt(page.length)],
    [3, 'i64', BigInt(file.rows)],
  ])
  const root: SchemaNode = { name: 'schema', repetition: REPETITION.REQUIRED, children: [file.column] }
  const footer = struct([
    [1, 'i32', 1],
    [2, 'list<struct>', flatten(root).map(schemaElement)],
    [3, 'i64', BigInt(file.footerRows ?? file.rows)],
    [4, 'list<struct>', [rowGroup]],
  ])
  const magic = text('PAR1')
  await writeFile(path, concat(magic, page, footer, uint32(footer.length), magic))
}

function flatten(node: SchemaNode): SchemaNode[] {
  return [node, ...(node.children ?? []).flatMap(flatten)]
}

function schemaElement(node: SchemaNode): Uint8Array {
  const fields: Field[] = []
  if (node.type !== undefined) fields.push([1, 'i32', node.type])
  if (node.name !== 'schema') fields.push([3, 'i32', node.repetition])
  fields.push([4, 'binary', text(node.name)])
  if (node.children) fields.push([5, 'i32', node.children.length])
  if (node.converted !== undefined) fields.push([6, 'i32', node.converted])
  return struct(fields)
}

/** RLE/bit-packed hybrid levels, one RLE run per value; nothing when the column has no such level. */
function levels(values: readonly number[], max: number): Uint8Array {
  if (max === 0) return new Uint8Array(0)
  const width = Math.ceil(Math.ceil(Math.log2(max + 1)) / 8)
  return concat(
    ...values.map((v) =>
      concat(
        varint(2n),
        Uint8Array.from({ length: width }, (_, i) => (v >> (8 * i)) & 0xff),
      ),
    ),
  )
}

const withLength = (bytes: Uint8Array) => (bytes.length === 0 ? bytes : concat(uint32(bytes.length), bytes))

type Field =
  | [number, 'i32', number]
  | [number, 'i64', bigint]
  | [number, 'bool', boolean]
  | [number, 'binary', Uint8Array]
  | [number, 'struct', Uint8Array]
  | [number, 'list<i32>', number[]]
  | [number, 'list<binary>', Uint8Array[]]
  | [number, 'list<struct>', Uint8Array[]]

const COMPACT = { TRUE: 1, FALSE: 2, I32: 5, I64: 6, BINARY: 8, LIST: 9, STRUCT: 12 } as const

/** A compact-protocol struct of fields in ascending id order, ending with STOP. */
function struct(fields: readonly Field[]): Uint8Array {
  const parts: Uint8Array[] = []
  let last = 0
  for (const field of fields) {
    const delta = field[0] - last
    const header = (compact: number) => Uint8Array.of((delta << 4) | compact)
    last = field[0]
    if (field[1] === 'i32') parts.push(header(COMPACT.I32), zigzag(BigInt(field[2])))
    else if (field[1] === 'i64') parts.push(header(COMPACT.I64), zigzag(field[2]))
    else if (field[1] === 'bool') parts.push(header(field[2] ? COMPACT.TRUE : COMPACT.FALSE))
    else if (field[1] === 'binary')
      parts.push(header(COMPACT.BINARY), varint(BigInt(field[2].length)), field[2])
    else if (field[1] === 'struct') parts.push(header(COMPACT.STRUCT), field[2])
    else if (field[1] === 'list<i32>')
      parts.push(
        header(COMPACT.LIST),
        listHeader(field[2].length, COMPACT.I32),
        ...field[2].map((v) => zigzag(BigInt(v))),
      )
    else if (field[1] === 'list<binary>')
      parts.push(
        header(COMPACT.LIST),
        listHeader(field[2].length, COMPACT.BINARY),
        ...field[2].flatMap((v) => [varint(BigInt(v.length)), v]),
      )
    else parts.push(header(COMPACT.LIST), listHeader(field[2].length, COMPACT.STRUCT), ...field[2])
  }
  return concat(...parts, Uint8Array.of(0))
}

const listHeader = (size: number, element: number) =>
  size < 15
    ? Uint8Array.of((size << 4) | element)
    : concat(Uint8Array.of(0xf0 | element), varint(BigInt(size)))

const zigzag = (n: bigint) => varint(n >= 0n ? n << 1n : (-n << 1n) - 1n)

function varint(n: bigint): Uint8Array {
  const bytes: number[] = []
  let rest = n
  do {
    const low = Number(rest & 0x7fn)
    rest >>= 7n
    bytes.push(rest > 0n ? low | 0x80 : low)
  } while (rest > 0n)
  return Uint8Array.from(bytes)
}

function uint32(n: number): Uint8Array {
  const bytes = new Uint8Array(4)
  new DataView(bytes.buffer).setUint32(0, n, true)
  return bytes
}

export const text = (s: string) => new TextEncoder().encode(s)

export function concat(...parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/** PLAIN INT32 values. */
export function int32s(values: readonly number[]): Uint8Array {
  const bytes = new Uint8Array(values.length * 4)
  const view = new DataView(bytes.buffer)
  values.forEach((v, i) => {
    view.setInt32(i * 4, v, true)
  })
  return bytes
}

/** PLAIN INT96 timestamps: nanoseconds of the day, then the Julian day number. */
export function int96s(values: readonly { julianDay: number; nanosOfDay: bigint }[]): Uint8Array {
  const bytes = new Uint8Array(values.length * 12)
  const view = new DataView(bytes.buffer)
  values.forEach((v, i) => {
    view.setBigUint64(i * 12, v.nanosOfDay, true)
    view.setInt32(i * 12 + 8, v.julianDay, true)
  })
  return bytes
}
