/**
 * The contract's `int` is 32 bits, and BigQuery's only integer column is INT64: a value of an `int`
 * field outside 32 bits would land where every other sink refuses it. So the parts of a schema with
 * `int` fields are read here (only those) and such records refused, naming the field and the value.
 */
import type { BatchPart, NamespaceSchema, RefusedRow } from '@skippr/connector-api'
import { parseCsv, recordRanges } from '@skippr/connector-api'

export const INT_OUT_OF_RANGE = 'SKIPPR_INT_OUT_OF_RANGE'
const MIN = -2147483648
const MAX = 2147483647

export function outOfRangeInts(
  partIndex: number,
  part: BatchPart & { schema: NamespaceSchema },
): RefusedRow[] {
  const ints = part.schema.fields.flatMap((f, i) => (f.type === 'int' ? [{ name: f.name, index: i }] : []))
  if (ints.length === 0) return []
  const decoder = new TextDecoder()
  const refused: RefusedRow[] = []
  recordRanges(part.body, part.format).forEach(([start, end], row) => {
    const text = decoder.decode(part.body.subarray(start, end))
    const values = valuesOf(text, part.format, ints)
    for (const [k, value] of values.entries()) {
      if (value === null || value === undefined || value === '') continue
      const n = Number(value)
      if (Number.isInteger(n) && (n < MIN || n > MAX)) {
        const name = ints[k]?.name ?? ''
        refused.push({
          part: partIndex,
          row,
          code: INT_OUT_OF_RANGE,
          error: `field ${name}: ${value} is outside the 32-bit range of an int field`,
        })
        return
      }
    }
  })
  return refused
}

function valuesOf(
  text: string,
  format: BatchPart['format'],
  ints: { name: string; index: number }[],
): unknown[] {
  try {
    if (format === 'csv') {
      const record = parseCsv(text)[0] ?? []
      return ints.map((f) => record[f.index])
    }
    const object = JSON.parse(text) as Record<string, unknown>
    return ints.map((f) => object?.[f.name])
  } catch {
    // A record that does not parse is BigQuery's to refuse.
    return []
  }
}
