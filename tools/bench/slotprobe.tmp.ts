import * as fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { openSlot } from '../../packages/sf/src/index.js'
const size = Number(process.env.SIZE ?? 65536), count = Number(process.env.COUNT ?? 4000)
const sfDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'probe-'))
const slot = await openSlot({ sfDir })
const payload = Buffer.alloc(size, 7); const W = Math.max(1, Math.floor(4 * 1024 * 1024 / size))
let t = performance.now()
for (let i = 0; i < count; i += W) await Promise.all(Array.from({ length: Math.min(W, count - i) }, () => slot.append(payload)))
let s = (performance.now() - t) / 1000
console.log(`slot append ${count} x ${size}: ${(count * size / 1e6 / s).toFixed(1)} MB/s`, slot.stats().syncs)
await slot.ack(slot.publishedFsn); await slot.close(); await fsp.rm(sfDir, { recursive: true })
