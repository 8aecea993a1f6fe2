/** See table-query.mjs: a plain-node script so the in-table side pays no TypeScript loader. */
export function queryTable(file: string, sql: string): Promise<string>
