/**
 * `@duckdb/node-api` loaded with require. It is CommonJS: an ESM import would first have Node scan
 * each of its files for export names, which costs more than loading it (about 130 ms of every
 * `skipprd sync` start). Both ways give the same module, so the instance cache is still shared
 * with code that imports it.
 */
import { createRequire } from 'node:module'

type NodeApi = typeof import('@duckdb/node-api')

export const { DuckDBInstance } = createRequire(import.meta.url)('@duckdb/node-api') as NodeApi
export type DuckDBInstance = import('@duckdb/node-api').DuckDBInstance
