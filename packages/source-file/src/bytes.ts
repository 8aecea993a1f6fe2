/** The ASCII codes that the CSV and JSON-lines scanners and parsers look for. */
export const TAB = 9
export const LF = 10
export const CR = 13
export const SPACE = 32
export const QUOTE = 34
export const COMMA = 44
export const COLON = 58
export const OPEN_BRACKET = 91
export const BACKSLASH = 92
export const CLOSE_BRACKET = 93
export const OPEN_BRACE = 123
export const CLOSE_BRACE = 125
