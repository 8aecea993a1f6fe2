/**
 * The comparison rules. Every landed cell is turned into a canonical string of its landed type,
 * and so is what the source held: the text of a file's field read as that type, or a typed value
 * converted to it. The two must be equal; a source value that the landed type cannot hold exactly
 * gives `undefined`, which never equals a landed value.
 *
 * Canonical forms: string as is; int/long decimal digits; double JS's shortest round-trip digits,
 * with `-0`, `NaN`, `Infinity`, `-Infinity`; boolean `true`/`false`; date days since 1970-01-01;
 * timestamp microseconds since 1970-01-01 UTC, or `infinity`/`-infinity`; json the value
 * re-serialised with sorted keys (numbers compared as doubles).
 */
import type { FieldType } from '@skippr/connector-api'
import { MICROS_PER_DAY, parseDate, parseTimestamp } from './calendar.js'
import type { JsonData, Value } from './table.js'

const INTEGER = /^[-+]?\d+$/
const DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/
const NON_FINITE: Record<string, number> = {
  nan: Number.NaN,
  infinity: Number.POSITIVE_INFINITY,
  inf: Number.POSITIVE_INFINITY,
  '+infinity': Number.POSITIVE_INFINITY,
  '-infinity': Number.NEGATIVE_INFINITY,
  '-inf': Number.NEGATIVE_INFINITY,
}

export function canonicalDouble(n: number): string {
  if (Number.isNaN(n)) return 'NaN'
  if (Object.is(n, -0)) return '-0'
  return String(n)
}

export function canonicalJson(value: JsonData): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort()
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k] as JsonData)}`).join(',')}}`
  }
  if (typeof value === 'number') return String(value)
  return JSON.stringify(value)
}

/** A sink's text of a landed value (see the read-back SQL in sinks.ts) in canonical form. */
export function landedCanonical(type: FieldType, text: string): string {
  switch (type) {
    case 'int':
    case 'long':
      return BigInt(text).toString()
    case 'double':
      return canonicalDouble(NON_FINITE[text.toLowerCase()] ?? Number(text))
    case 'json':
      return canonicalJson(JSON.parse(text) as JsonData)
    default:
      return text
  }
}

/** What a file's field text means in `type`, or undefined when the type cannot hold it exactly. */
export function textIn(type: FieldType, text: string): string | undefined {
  switch (type) {
    case 'string':
      return text
    case 'int':
    case 'long':
      return INTEGER.test(text) ? BigInt(text).toString() : undefined
    case 'double':
      return doubleOfText(text)
    case 'boolean': {
      const lower = text.toLowerCase()
      return lower === 'true' || lower === 'false' ? lower : undefined
    }
    case 'date':
      return parseDate(text)?.toString()
    case 'timestamp':
      return parseTimestamp(text)?.toString()
    case 'json':
      try {
        return canonicalJson(JSON.parse(text) as JsonData)
      } catch {
        return undefined
      }
  }
}

/** An integer's text is exact only when the double is that integer; a decimal is its nearest double. */
function doubleOfText(text: string): string | undefined {
  const special = NON_FINITE[text.toLowerCase()]
  if (special !== undefined) return canonicalDouble(special)
  if (INTEGER.test(text)) return exactDouble(BigInt(text), text.startsWith('-'))
  return DECIMAL.test(text) ? canonicalDouble(Number(text)) : undefined
}

function exactDouble(n: bigint, negative: boolean): string | undefined {
  const double = Number(n)
  if (BigInt(double) !== n) return undefined
  return canonicalDouble(negative && double === 0 ? -0 : double)
}

/** A typed source value in `type`: the same type, or a widening that keeps it exactly. */
export function valueIn(type: FieldType, sourceType: FieldType, value: Value): string | undefined {
  if (sourceType === 'int' || sourceType === 'long') {
    const n = BigInt(value as number | bigint)
    if (type === 'int' || type === 'long') return n.toString()
    if (type === 'double') return exactDouble(n, false)
  }
  if (sourceType === 'date' && type === 'timestamp')
    return (BigInt(value as number) * MICROS_PER_DAY).toString()
  if (sourceType !== type) return undefined
  switch (type) {
    case 'double':
      return canonicalDouble(value as number)
    case 'json':
      return canonicalJson(value as JsonData)
    default:
      return String(value)
  }
}
