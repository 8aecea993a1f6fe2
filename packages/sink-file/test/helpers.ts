import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { SinkHarness } from '@skippr/conformance'
import { fileRows } from '@skippr/conformance'
import type { FileEncoding } from '@skippr/file-formats'
import { FileSink, namespaceDir } from '../src/index.js'

/** Every row in a namespace's finished files (temporary files are hidden and skipped). */
export async function readRows(root: string, namespace: string): Promise<Record<string, unknown>[]> {
  const dir = namespaceDir(root, namespace)
  const names = await readdir(dir).catch(() => [] as string[])
  const rows: Record<string, unknown>[] = []
  for (const name of names.filter((n) => !n.startsWith('.')).sort()) {
    rows.push(...(await fileRows(name, await readFile(path.join(dir, name)))))
  }
  return rows
}

export function fileHarness(
  format: FileEncoding['format'],
  compression: FileEncoding['compression'] = 'none',
): SinkHarness {
  let root = ''
  return {
    name: `file (${format}${compression === 'none' ? '' : `, ${compression}`})`,
    setup: async () => {
      root = await mkdtemp(path.join(tmpdir(), 'skippr-file-'))
    },
    createSink: async () => new FileSink({ path: 'out', format, compression }, { configDir: root }),
    readRows: (namespace) => readRows(path.join(root, 'out'), namespace),
    cleanup: () => rm(root, { recursive: true, force: true }),
  }
}
