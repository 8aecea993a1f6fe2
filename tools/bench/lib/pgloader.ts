/**
 * pgloader (Debian's package), the peer the e2e bench measures beside `psql \copy`: the tool users
 * pick to load a CSV file into PostgreSQL. It runs as its own process with its default settings
 * (batches of rows, each its own COPY, committed as it ends), from a command file naming the file
 * and a table made beforehand; without a field list it sends the fields to the table's columns in
 * order, as `psql \copy` does.
 */
import { spawnSync } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const PGLOADER = 'pgloader'

/** Installs pgloader when it is missing (lib/install-pgloader.sh), showing apt's output. */
export function ensurePgloader(): void {
  const script = fileURLToPath(new URL('install-pgloader.sh', import.meta.url))
  const { status, error } = spawnSync('bash', [script], { stdio: 'inherit' })
  if (error || status !== 0)
    throw new Error(`${script} exited ${status}: pgloader is not installed`, { cause: error })
}

/**
 * Makes `workDir` with a command file loading `csv`, which has a header line, into `table` of the
 * database at `url`, and returns pgloader's arguments for it: the same load each time they run.
 */
export async function pgloaderArgs(
  workDir: string,
  url: string,
  table: string,
  csv: string,
): Promise<string[]> {
  await mkdir(workDir)
  const commandFile = path.join(workDir, 'load.pgl')
  await writeFile(
    commandFile,
    [
      'LOAD CSV',
      `  FROM '${csv}'`,
      `  INTO ${url}`,
      `  TARGET TABLE ${table}`,
      `  WITH skip header = 1, fields optionally enclosed by '"', fields terminated by ','`,
      ';',
      '',
    ].join('\n'),
  )
  // Its log and reject files go under workDir, not into a pgloader directory shared in the OS temp dir.
  return ['--root-dir', workDir, commandFile]
}
