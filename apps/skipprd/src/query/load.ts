/**
 * Moving WAL batches into DuckDB without touching a value in JavaScript: each part's body is
 * written to a file as it is, and DuckDB's own readers (read_csv / read_json) parse the files with
 * the column types of the schema version the rows were written with — the DuckDB sink's approach.
 * Every row is tagged with its batch's seq, taken from the file's name.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Field, NamespaceSchema } from '@skippr/connector-api'
import { ident, literal, loadFileChunks, readRecords } from '@skippr/sink-duckdb'
import type { PipelineState } from '@skippr/state'
import type { WalBatch } from '@skippr/wal'

/** The column holding the seq of the batch a row came from. */
export const SEQ_COLUMN = '_skippr_seq'
const FILE_COLUMN = '_skippr_file'

/** Rows of one namespace and schema version in one format; each part's body in its own file. */
export interface LoadGroup {
  readonly namespace: string
  readonly fields: readonly Field[]
  readonly format: 'csv' | 'jsonl'
  readonly files: string[]
}

export interface WrittenBatches {
  readonly groups: readonly LoadGroup[]
  /** Seq of the last batch written; undefined when there was none. */
  readonly lastSeq: bigint | undefined
}

/** A query session's directory of WAL batch files to load (removed when the session closes). */
export class WalBatchFiles {
  private dir: Promise<string> | undefined
  private count = 0

  /**
   * Writes the parts of `batches` to files as they are read, so at most one batch is in memory.
   * Stops before a batch that uses a schema version newer than `newest` (committed after the
   * caller read the schemas): the caller's tables do not have its columns yet.
   */
  async write(
    batches: AsyncIterable<WalBatch>,
    versions: SchemaVersions,
    newest: ReadonlyMap<string, number>,
  ): Promise<WrittenBatches> {
    const groups = new Map<string, LoadGroup>()
    let lastSeq: bigint | undefined
    for await (const batch of batches) {
      if (batch.parts.some((p) => p.schemaVersion > (newest.get(p.namespace) ?? 0))) break
      for (const part of batch.parts) {
        if (part.rows === 0) continue
        const key = `${part.namespace}\u0000${part.schemaVersion}\u0000${part.format}`
        let group = groups.get(key)
        if (group === undefined) {
          const { fields } = await versions.get(part.namespace, part.schemaVersion)
          group = { namespace: part.namespace, fields, format: part.format, files: [] }
          groups.set(key, group)
        }
        const file = path.join(await this.directory(), `${batch.id.seq}-${++this.count}.${part.format}`)
        await writeFile(file, loadFileChunks(part.format, part.body))
        group.files.push(file)
      }
      lastSeq = batch.id.seq
    }
    return { groups: [...groups.values()], lastSeq }
  }

  async remove(written: WrittenBatches): Promise<void> {
    await Promise.all(written.groups.flatMap((g) => g.files).map((file) => rm(file, { force: true })))
  }

  async close(): Promise<void> {
    const dir = this.dir && (await this.dir.catch(() => undefined))
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  }

  private directory(): Promise<string> {
    this.dir ??= mkdtemp(path.join(tmpdir(), 'skippr-query-'))
    return this.dir
  }
}

/** `INSERT INTO <table> … FROM read_csv/read_json(<the group's files>)`, read as the DuckDB sink lands them. */
export function insertSql(table: string, group: LoadGroup): string {
  const targets = [...group.fields.map((f) => ident(f.name)), SEQ_COLUMN].join(', ')
  const seq = `CAST(string_split(parse_filename(${FILE_COLUMN}), '-')[1] AS BIGINT)`
  const { columns, from } = readRecords(
    group.format,
    group.files,
    group.fields,
    `filename = ${literal(FILE_COLUMN)}`,
  )
  return `INSERT INTO ${table} (${targets}) SELECT ${[...columns, seq].join(', ')} FROM ${from}`
}

/** The schema each batch part was written with, read from the state store once per version. */
export class SchemaVersions {
  private readonly known = new Map<string, NamespaceSchema>()

  constructor(private readonly state: PipelineState) {}

  async get(namespace: string, version: number): Promise<NamespaceSchema> {
    const key = `${namespace}\u0000${version}`
    const known = this.known.get(key)
    if (known) return known
    const saved = await this.state.getSchema(namespace, version)
    if (!saved) {
      throw new Error(
        `schema version ${version} of namespace '${namespace}' is missing from the state store; the WAL holds rows that need it`,
      )
    }
    const schema = saved.schema as unknown as NamespaceSchema
    this.known.set(key, schema)
    return schema
  }
}
