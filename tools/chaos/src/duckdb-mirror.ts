/**
 * A destination that SQL cannot reach as it is (a ClickHouse 18.16 server, an AMQP queue) is
 * checked through a mirror: after the last run its rows are exported as JSON lines and loaded
 * into an in-memory DuckDB table `rentals`, which the checks then query like any other
 * destination's.
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { DuckDBInstance } from '@duckdb/node-api'
import type { Row } from './destination.js'

export interface DuckdbMirror {
  query(sql: string): Promise<Row[]>
  close(): void
}

/** Rows exported as JSON lines, and, where JSON alone would lose them, the columns' DuckDB types. */
export interface MirrorRows {
  readonly lines: string
  /** Every column with its DuckDB type; without it, DuckDB infers the types from the values. */
  readonly columns?: Readonly<Record<string, string>>
}

/** Loads the rows `exportRows` returns (once, on the first query) as `main.rentals`. */
export function duckdbMirror(workDir: string, exportRows: () => Promise<MirrorRows>): DuckdbMirror {
  let instance: DuckDBInstance | undefined
  let connection: Awaited<ReturnType<DuckDBInstance['connect']>> | undefined
  return {
    async query(sql) {
      if (!connection) {
        const file = path.join(workDir, 'mirror.jsonl')
        const rows = await exportRows()
        await writeFile(file, rows.lines)
        instance = await DuckDBInstance.create(':memory:')
        connection = await instance.connect()
        const columns = rows.columns ? `, columns = ${structLiteral(rows.columns)}` : ''
        await connection.run(
          `CREATE TABLE rentals AS SELECT * FROM read_json(${sqlText(file)}, format = 'newline_delimited'${columns})`,
        )
      }
      return (await connection.runAndReadAll(sql)).getRowObjectsJS()
    },
    close() {
      connection?.closeSync()
      instance?.closeSync()
    },
  }
}

const sqlText = (text: string) => `'${text.replaceAll("'", "''")}'`

/** `{'name': 'TYPE', …}`, as read_json's `columns` takes them. */
function structLiteral(columns: Readonly<Record<string, string>>): string {
  return `{${Object.entries(columns)
    .map(([name, type]) => `${sqlText(name)}: ${sqlText(type)}`)
    .join(', ')}}`
}

/** The mirror's timestamps are ISO text or DuckDB timestamps: either way, whole epoch seconds. */
export const mirrorEpochSeconds = (column: string) => `CAST(epoch(CAST(${column} AS TIMESTAMPTZ)) AS BIGINT)`
