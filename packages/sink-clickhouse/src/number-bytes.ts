/**
 * Numbers read from their ASCII bytes, for the texts whose value needs no rounding decision: an
 * integer of up to 15 digits, and a decimal of up to 15 digits without an exponent. Any other text
 * gives undefined, and the caller reads it as a string (row-binary.ts), which decides every case.
 * Each value here is exactly what that path gives the same text.
 */

const MINUS = 45
const DOT = 46
const ZERO = 48
/** Digits (and a sign) that a double holds exactly: every integer of up to 15 digits is below 2^53. */
export const SAFE_INTEGER_TEXT = 16
/** 10^0 … 10^22: every one is a double exactly (5^22 < 2^53). */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => 10 ** k)
/** A mantissa below this times 10 plus a digit stays below 2^53, so it is exact. */
const MANTISSA_LIMIT = (2 ** 53 - 9) / 10

/** The value of `-?\d+` in bytes[start, end) when it has fewer than 16 characters, as `Number(text)` reads it. */
export function shortInteger(bytes: Uint8Array, start: number, end: number): number | undefined {
  const negative = bytes[start] === MINUS
  const from = negative ? start + 1 : start
  if (from === end || end - start >= SAFE_INTEGER_TEXT) return undefined
  let value = 0
  for (let i = from; i < end; i++) {
    const digit = (bytes[i] as number) - ZERO
    if (digit < 0 || digit > 9) return undefined
    value = value * 10 + digit
  }
  return negative ? -value : value
}

/**
 * The double of `-?(0|[1-9]\d*)(\.\d+)?` in bytes[start, end) when its digits, read as one integer,
 * stay below 2^53 and it has at most 22 after the point. The digits and the power of ten are then
 * both doubles exactly, and one IEEE division rounds their quotient correctly: the double nearest
 * the text's value, which is what `Number(text)` gives (Clinger's fast path).
 */
export function shortDecimal(bytes: Uint8Array, start: number, end: number): number | undefined {
  const negative = bytes[start] === MINUS
  let i = negative ? start + 1 : start
  // No leading zeros: `01` is not a number to the text path either, so it decides that one.
  if (i === end || (bytes[i] === ZERO && i + 1 < end && bytes[i + 1] !== DOT)) return undefined
  let mantissa = 0
  let point = -1
  for (; i < end; i++) {
    const c = bytes[i] as number
    if (c === DOT) {
      if (point !== -1 || i === end - 1 || i === (negative ? start + 1 : start)) return undefined
      point = i
      continue
    }
    const digit = c - ZERO
    if (digit < 0 || digit > 9 || mantissa > MANTISSA_LIMIT) return undefined
    mantissa = mantissa * 10 + digit
  }
  const decimals = point === -1 ? 0 : end - point - 1
  const power = POWERS_OF_TEN[decimals]
  if (power === undefined) return undefined
  const value = mantissa / power
  return negative ? -value : value
}
