/**
 * The clustered WAL's record beside a local disk log, `<dataDir>/wal/<slot name>.wal-cluster`: JSON
 *
 *   { "version": 1, "logId": "…" | null, "base": "<FSN>" | null, "token": "<fencing token>" }
 *
 * replaced atomically (temp file, fdatasync, rename, directory fsync), so a crash leaves the old record or
 * the new one. `logId` is the log's generation (protocol.ts). `base` translates FSNs: the local disk log
 * numbers its frames from 1 after a clear(), and local FSN n holds the log's FSN base + n, so a copy that
 * starts after frames were trimmed keeps every frame at the FSN the leader gave it. `base: null` means the
 * copy was dropped and waits for its first frame to fix the base. `token` is the highest fencing token the
 * copy accepted. A leader's own log has base 0.
 */
import { constants } from 'node:fs'
import * as fsp from 'node:fs/promises'
import path from 'node:path'
import { slotName, WalCorruptError } from '@skippr/wal'

export interface ClusterRecord {
  readonly logId: string | null
  readonly base: bigint | null
  readonly token: bigint
}

const SUFFIX = '.wal-cluster'
const EMPTY_RECORD: ClusterRecord = { logId: null, base: null, token: 0n }

export function recordPath(dataDir: string, pipeline: string): string {
  return path.join(dataDir, 'wal', `${slotName(pipeline)}${SUFFIX}`)
}

/** The record; EMPTY_RECORD when there is none. A record that does not parse is WAL_CORRUPT. */
export async function readRecord(file: string): Promise<ClusterRecord> {
  let text: string
  try {
    text = await fsp.readFile(file, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY_RECORD
    throw e
  }
  try {
    const v = JSON.parse(text) as { version?: unknown; logId?: unknown; base?: unknown; token?: unknown }
    if (v.version === 1 && (v.logId === null || typeof v.logId === 'string') && typeof v.token === 'string')
      return {
        logId: v.logId,
        base: typeof v.base === 'string' ? BigInt(v.base) : null,
        token: BigInt(v.token),
      }
  } catch {}
  throw new WalCorruptError(file, `unreadable clustered WAL record ${JSON.stringify(text.slice(0, 80))}`)
}

export async function writeRecord(file: string, record: ClusterRecord): Promise<void> {
  const json = JSON.stringify({
    version: 1,
    logId: record.logId,
    base: record.base === null ? null : record.base.toString(),
    token: record.token.toString(),
  })
  const tmp = `${file}.tmp`
  const handle = await fsp.open(tmp, 'w')
  try {
    await handle.writeFile(`${json}\n`)
    await handle.datasync()
  } finally {
    await handle.close()
  }
  await fsp.rename(tmp, file)
  const dir = await fsp.open(path.dirname(file), constants.O_RDONLY | constants.O_DIRECTORY)
  try {
    await dir.sync()
  } finally {
    await dir.close()
  }
}
