/**
 * The `data_dir` check: the directory the WAL, the state and the logs go in takes a new entry, and
 * how much space its file system has left. A data dir not created yet (the first sync creates it)
 * is tried in the nearest directory on its way that exists. The probe is a directory made and
 * removed at once.
 */
import { mkdtemp, rm, stat, statfs } from 'node:fs/promises'
import path from 'node:path'
import type { PipelineSettings } from '../config/settings.js'
import { formatBytes } from '../output/bytes.js'
import { type Check, failed, messageOf, passed } from './check.js'

/** One check per data dir: `data_dir` when the checked pipelines share one, else `data_dir:<pipeline>`. */
export async function dataDirChecks(pipelines: readonly PipelineSettings[]): Promise<Check[]> {
  const dirs = [...new Set(pipelines.map((p) => p.dataDir))]
  const checks: Check[] = []
  for (const dir of dirs) {
    const users = pipelines.filter((p) => p.dataDir === dir).map((p) => p.name)
    const name = dirs.length === 1 ? 'data_dir' : `data_dir:${users.join(',')}`
    checks.push(await dataDirCheck(name, dir))
  }
  return checks
}

async function dataDirCheck(name: string, dir: string): Promise<Check> {
  const existing = await nearestExisting(dir)
  const pending = existing === dir ? '' : ' (not created yet: the first sync creates it)'
  try {
    await rm(await mkdtemp(path.join(existing, '.skippr-doctor-')), { recursive: true })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? messageOf(error)
    return failed(
      name,
      `${dir}${pending}: cannot write in ${existing} (${code}): make it writable, or point DATA_DIR (or the pipeline's data_dir) at a directory that is`,
    )
  }
  const space = await statfs(existing)
  return passed(name, `${dir}${pending}: writable, ${formatBytes(space.bavail * space.bsize)} free`)
}

async function nearestExisting(dir: string): Promise<string> {
  for (let at = dir; ; at = path.dirname(at)) {
    if ((await stat(at).catch(() => undefined)) !== undefined || path.dirname(at) === at) return at
  }
}
