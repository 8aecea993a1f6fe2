/** The ASCII codes that the CSV and JSON-lines scanners and parsers look for. */
export const TAB = 9
export const LF = 10
export const CR = 13
export const SPACE = 32
export const QUOTE = 34
export const PLUS = 43
export const COMMA = 44
export const MINUS = 45
export const DOT = 46
export const SLASH = 47
export const COLON = 58
export const UPPER_E = 69
export const UPPER_T = 84
export const OPEN_BRACKET = 91
export const BACKSLASH = 92
export const CLOSE_BRACKET = 93
export const LOWER_E = 101
export const LOWER_F = 102
export const LOWER_N = 110
export const LOWER_T = 116
export const OPEN_BRACE = 123
export const CLOSE_BRACE = 125
export const ZERO = 48
export const NINE = 57

const DIGIT = new Uint8Array(256)
for (let c = ZERO; c <= NINE; c++) DIGIT[c] = 1

/** An ASCII digit; false past the end of the bytes (undefined). */
export function isDigit(c: number | undefined): boolean {
  return DIGIT[c as number] === 1
}
