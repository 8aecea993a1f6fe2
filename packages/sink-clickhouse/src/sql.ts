/**
 * Names and values spliced into SQL text: 18.16 has no query parameters, so every name from data
 * and every string compared in a query is quoted here, with backslash escapes (the only escape
 * ClickHouse reads in both quote styles).
 */

/** A database, table or column name as a backquoted identifier. */
export function quoteName(name: string): string {
  return `\`${name.replace(/[\\`]/g, '\\$&')}\``
}

/** A string literal. */
export function quoteString(value: string): string {
  return `'${value.replace(/[\\']/g, '\\$&')}'`
}

export function qualifiedName(database: string, table: string): string {
  return `${quoteName(database)}.${quoteName(table)}`
}
