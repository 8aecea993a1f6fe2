/**
 * The UTF-16 code units the record scanners and value parsers compare with `charCodeAt`: comparing
 * numbers, not one-character strings, keeps the per-character loops free of string allocations.
 */

/** Tab */
export const TAB = 9
/** Line feed */
export const LF = 10
/** Carriage return */
export const CR = 13
/** Space */
export const SPACE = 32
/** `"` */
export const QUOTE = 34
/** `+` */
export const PLUS = 43
/** `,` */
export const COMMA = 44
/** `-` */
export const MINUS = 45
/** `.` */
export const DOT = 46
/** `0` */
export const ZERO = 48
/** `:` */
export const COLON = 58
/** `T` */
export const UPPER_T = 84
/** `Z` */
export const UPPER_Z = 90
/** `[` */
export const OPEN_BRACKET = 91
/** Backslash */
export const BACKSLASH = 92
/** `]` */
export const CLOSE_BRACKET = 93
/** `{` */
export const OPEN_BRACE = 123
/** `}` */
export const CLOSE_BRACE = 125
