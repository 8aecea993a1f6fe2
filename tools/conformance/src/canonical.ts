/**
 * Destinations hand values back in their own shapes (bigint or string for a BIGINT, Date or text
 * for a timestamp, parsed or raw JSON). The suites compare rows in one canonical form per field
 * type, so a harness only has to return what its driver gives.
 */
import type { Field, FieldType } from '@skippr/connector-api'

export type Canonical = string | number | boolean | null

/** Every field of `row` (missing ones are NULL) in canonical form, keyed by field name. */
export function canonicalRow(
  row: Record<string, unknown>,
  fields: readonly Field[],
): Record<string, Canonical> {
  const out: Record<string, Canonical> = {}
  for (const field of fields) out[field.name] = canonicalValue(row[field.name], field.type)
  return out
}

/** Rows in canonical form, sorted, so comparisons ignore the order a destination returns them in. */
export function canonicalRows(
  rows: readonly Record<string, unknown>[],
  fields: readonly Field[],
): Record<string, Canonical>[] {
  return rows
    .map((row) => canonicalRow(row, fields))
    .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1))
}

export function canonicalValue(value: unknown, type: FieldType): Canonical {
  if (value === null || value === undefined) return null
  switch (type) {
    case 'int':
    case 'long':
      return BigInt(value as string | number | bigint).toString()
    case 'double':
      return Number(value)
    case 'boolean':
      return value === true || value === 'true' || value === 't'
    case 'date':
      return value instanceof Date ? value.toISOString().slice(0, 10) : String(value).slice(0, 10)
    case 'timestamp':
      return new Date(value instanceof Date ? value : String(value)).toISOString()
    case 'json':
      return stableJson(typeof value === 'string' ? JSON.parse(value) : value)
    case 'string':
      return String(value)
  }
}

/** JSON text with object keys sorted, so `{"b":1,"a":2}` equals `{"a":2,"b":1}` (jsonb reorders). */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value)
}
