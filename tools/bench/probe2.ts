import * as fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { openSlot } from '@skippr/sf'
const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'probe-'))
const body = Buffer.alloc(10_000_000, 97)
const slot = await openSlot({ sfDir: root, senderId: 'x', maxSegmentBytes: 10 * 1024 * 1024, maxTotalBytes: 2 ** 50 })
const t = { alloc: 0, copy: 0, append: 0, appendCopy: 0 }
for (let i = 0; i < 20; i++) {
  let s = performance.now(); const f = Buffer.allocUnsafe(body.length + 100); t.alloc += performance.now() - s
  s = performance.now(); f.set(body, 100); t.copy += performance.now() - s
  s = performance.now(); await slot.append(body); t.append += performance.now() - s
  s = performance.now(); await slot.append(f); t.appendCopy += performance.now() - s
}
console.log(Object.fromEntries(Object.entries(t).map(([k, v]) => [k, (v / 20).toFixed(2)])))
await slot.close(); await fsp.rm(root, { recursive: true })
