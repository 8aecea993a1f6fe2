/** A throwaway project directory with a skippr.yml, as a user would have one. */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'

export interface Project {
  readonly dir: string
  write(name: string, text: string | Uint8Array): Promise<void>
  /** Every log line written under `logs/` in `dir` (DATA_DIR unset). */
  logs(): Promise<string>
  remove(): Promise<void>
}

export async function project(config?: string): Promise<Project> {
  const dir = await mkdtemp(path.join(tmpdir(), 'skippr-'))
  const write = (name: string, text: string | Uint8Array) => writeFile(path.join(dir, name), text)
  if (config !== undefined) await write('skippr.yml', config)
  return {
    dir,
    write,
    async logs() {
      const logDir = path.join(dir, 'logs')
      const files = await readdir(logDir).catch(() => [])
      const texts = await Promise.all(files.map((f) => readFile(path.join(logDir, f), 'utf8')))
      return texts.join('')
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  }
}

/** A bikehire pipeline from the Sample source into `sink` (YAML of one data_sinks entry body). */
export function bikehireConfig(options: {
  rows: number
  /** Rows per Sample chunk (default 10,000). */
  batchRows?: number
  sink?: string
  extra?: string
  name?: string
}): string {
  const name = options.name ?? 'bikehire'
  const sink = options.sink ?? 'Duckdb: { path: ./warehouse.duckdb }'
  return [
    'data_sources:',
    '  sample:',
    `    Sample: { dataset: bikehire, rows: ${options.rows}${options.batchRows ? `, batch_rows: ${options.batchRows}` : ''} }`,
    'data_sinks:',
    '  warehouse:',
    `    ${sink}`,
    'pipelines:',
    `  ${name}:`,
    '    data_source: data_sources.sample',
    '    data_sink: data_sinks.warehouse',
    ...(options.extra ? [options.extra] : []),
    '',
  ].join('\n')
}
