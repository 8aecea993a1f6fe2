/**
 * Where a batch's rows go: `<path>/<namespace>/<pipeline>-<epoch>-<seq>.<ext>`, a pure function of
 * the batch identity, so a retry rewrites the very same file. Names come from source data: the
 * characters that are unsafe in a file name on some system, `%`, and a leading dot are
 * percent-encoded, so distinct names stay distinct and nothing escapes the output directory.
 */
import path from 'node:path'
import type { BatchIdentity, RecordFormat } from '@skippr/connector-api'

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it matches
const UNSAFE = /[\u0000-\u001f\u007f/\\:*?"<>|%]|^\./g

export function safeName(name: string): string {
  return name.replace(UNSAFE, (ch) =>
    [...new TextEncoder().encode(ch)]
      .map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`)
      .join(''),
  )
}

export function namespaceDir(root: string, namespace: string): string {
  return path.join(root, safeName(namespace))
}

export function batchFile(root: string, namespace: string, id: BatchIdentity, format: RecordFormat): string {
  const seq = id.seq.toString().padStart(12, '0')
  return path.join(
    namespaceDir(root, namespace),
    `${safeName(id.pipeline)}-${safeName(id.epoch)}-${seq}.${format}`,
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
