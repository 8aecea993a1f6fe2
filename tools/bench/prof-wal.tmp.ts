import * as fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { encodeJsonl } from '@skippr/connector-api'
import { bikehireRows } from '@skippr/source-sample'
import { BatchBuffer, openWal } from '@skippr/wal'
const pages = Array.from({ length: 64 }, (_, i) => bikehireRows(42, i * 4096, 4096) as unknown as Record<string, unknown>[])
const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'prof-'))
let saved: unknown
const wal = await openWal({ pipeline: 'p', dataDir, positions: { load: async () => saved as never, save: async (o) => { saved = o } } })
const buffer = new BatchBuffer({ thresholdBytes: 10485760, thresholdSeconds: 60, commit: (b) => wal.commit(b) })
const c = process.cpuUsage(); const t = performance.now()
let n = 0
for (let p = 0; p < 4; p++) for (const page of pages) await buffer.add({ namespace: 'r', schemaVersion: 1, format: 'jsonl', rows: page.length, body: encodeJsonl(page), offset: n++ })
await buffer.close()
const u = process.cpuUsage(c)
console.log('rows/s', Math.round(4 * 64 * 4096 / ((performance.now() - t) / 1000)), 'cpu rows/s', Math.round(4 * 64 * 4096 / ((u.user + u.system) / 1e6)), 'user', u.user / 1000, 'sys', u.system / 1000)
await wal.close(); await fsp.rm(dataDir, { recursive: true })
