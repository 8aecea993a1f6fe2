/**
 * Where a batch's rows go: `<path>/<namespace>/<pipeline>-<epoch>-<seq>.<ext>`, a pure function of
 * the batch identity, so a retry rewrites the very same file. Names come from source data and are
 * made safe as one file name (`safeName`), so nothing escapes the output directory.
 */
import path from 'node:path'
import type { BatchIdentity } from '@skippr/connector-api'
import { safeName } from '@skippr/file-formats'

export function namespaceDir(root: string, namespace: string): string {
  return path.join(root, safeName(namespace))
}

/** `extension` as `fileExtension` gives it: `jsonl`, `csv.gz`, `parquet`. */
export function batchFile(root: string, namespace: string, id: BatchIdentity, extension: string): string {
  const seq = id.seq.toString().padStart(12, '0')
  return path.join(
    namespaceDir(root, namespace),
    `${safeName(id.pipeline)}-${safeName(id.epoch)}-${seq}.${extension}`,
  )
}

/** The temporary name a file is written under before the rename: hidden, and owned by this process. */
export function tempFile(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`)
}

/** The PID of the process that wrote a temporary file, or undefined for any other name. */
export function tempOwner(name: string): number | undefined {
  const match = /^\..+\.(\d+)\.tmp$/.exec(name)
  return match ? Number(match[1]) : undefined
}
