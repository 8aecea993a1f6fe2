import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { SinkHarness } from '@skippr/conformance'
import { objectRows } from '@skippr/conformance'
import type { ObjectSink } from '@skippr/object-sink'
import * as v from 'valibot'
import type { FileConfig } from '../src/index.js'
import { createFileSink, fileConfig, LocalStore } from '../src/index.js'

/** Every row in a namespace's finished files, in key order (temporary files are hidden and skipped). */
export function readRows(root: string, namespace: string): Promise<Record<string, unknown>[]> {
  return objectRows(new LocalStore(root), namespace)
}

/** A File sink writing to `out` under `configDir`, for pipeline `pipeline`, with the fields as skippr.yml would give them. */
export function fileSinkAt(
  configDir: string,
  fields: Record<string, unknown>,
  pipeline = 'bikehire',
): ObjectSink {
  return createFileSink(v.parse(fileConfig, { path: 'out', ...fields }), { configDir, pipeline })
}

export function fileHarness(
  format: FileConfig['format'],
  compression: FileConfig['compression'] = 'none',
): SinkHarness {
  let root = ''
  return {
    name: `file (${format}${compression === 'none' ? '' : `, ${compression}`})`,
    setup: async () => {
      root = await mkdtemp(path.join(tmpdir(), 'skippr-file-'))
    },
    createSink: async () => fileSinkAt(root, { format, compression }),
    readRows: (namespace) => readRows(path.join(root, 'out'), namespace),
    cleanup: () => rm(root, { recursive: true, force: true }),
  }
}
