/**
 * CSV with a configured schema: whether a value lands in its numeric column (`int`, `long`,
 * `double`). A sink refuses `abc` in an integer column, and the batch with it; the source sets the
 * record aside instead, at its line (refused.ts). The scan lists the values with a character no
 * number has (scan.ts `NUMBER`); each is judged whole here. An inferred schema widens instead.
 *
 * Dates, timestamps and booleans are left to the sinks, which each read their own spellings
 * (PostgreSQL takes `yes` and `01/02/2020`), but for the values a sink would change without a word,
 * which the scan watches for too (scan.ts `CsvWatch`).
 */
import type { FieldType } from '@skippr/connector-api'
import type { CsvField } from './csv.js'

const INTEGER = /^[-+]?\d+$/
const DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/
const NOT_FINITE = /^[-+]?(inf|infinity|nan)$/i
const INT_MIN = -(2n ** 31n)
const INT_MAX = 2n ** 31n - 1n
const LONG_MIN = -(2n ** 63n)
const LONG_MAX = 2n ** 63n - 1n

/**
 * Whether both sinks load `value` into a column of numeric `type`: NULL, or an integer within the
 * type's range (leading zeros and spaces around it allowed, as both read them), or for a double any
 * decimal within its range, or an infinity or NaN spelled as both sinks read them.
 */
export function numberFits(value: CsvField, type: FieldType): boolean {
  if (value === null) return true
  const text = value.trim()
  if (type === 'double') return (DECIMAL.test(text) && Number.isFinite(Number(text))) || NOT_FINITE.test(text)
  if (!INTEGER.test(text)) return false
  const n = BigInt(text)
  return type === 'int' ? n >= INT_MIN && n <= INT_MAX : n >= LONG_MIN && n <= LONG_MAX
}
