/** The sink of one run: a fresh schema of the suite's sink database, or a fresh DuckDB file in the run's directory. */
import { type Database, runSchema } from './postgres.js'
import { duckdbTarget, postgresTarget, type SinkKind, type SinkTarget } from './sinks.js'

export function sinkTarget(kind: SinkKind, dir: string, database: Database): SinkTarget {
  return kind === 'postgres' ? postgresTarget(database, runSchema()) : duckdbTarget(dir)
}
