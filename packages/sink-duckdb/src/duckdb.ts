/**
 * `@duckdb/node-api`, loaded with require on first use. It is CommonJS: an ESM import would first have
 * Node scan each of its files for export names, which costs more than loading it (about 130 ms of every
 * `skipprd sync` start). Loading it when the sink first opens, rather than when the package is
 * imported, keeps its ~45 ms (mostly the native library) out of a sync's start: the runner opens the
 * sink in the background while the source is read. Both ways give the same module, so the instance
 * cache is still shared with code that imports it.
 */
import { createRequire } from 'node:module'

type NodeApi = typeof import('@duckdb/node-api')
export type DuckDBInstance = import('@duckdb/node-api').DuckDBInstance

const require = createRequire(import.meta.url)
let api: NodeApi | undefined

export function duckdbApi(): NodeApi {
  api ??= require('@duckdb/node-api') as NodeApi
  return api
}
