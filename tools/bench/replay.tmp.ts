import * as fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createReceiver, Sender } from '../../packages/sf/src/index.js'
const size = 65536, count = 4000, mb = size * count / 1e6
const payload = Buffer.alloc(size, 7)
const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'rp-'))
const net = await import('node:net'); const srv = net.createServer(); await new Promise<void>(r => srv.listen(0, '127.0.0.1', r)); const port = (srv.address() as any).port; await new Promise(r => srv.close(r))
const sender = await Sender.fromConfig(`ws::addr=127.0.0.1:${port};sf_dir=${dir};reconnect_initial_backoff_millis=20;reconnect_max_backoff_millis=40;`, { onError() {} })
for (let i = 0; i < count; i += 64) await Promise.all(Array.from({ length: 64 }, () => sender.sendBlocking(payload)))
let delivered = 0, batches = 0
const c = process.cpuUsage(); const t = performance.now()
const receiver = await createReceiver({ port, onFrames: ({ frames }) => { delivered += frames.length; batches++; return undefined } })
await sender.flush()
const u = process.cpuUsage(c); const wall = (performance.now() - t) / 1000
console.log(`replay ${mb.toFixed(0)} MB: cpu ${((u.user + u.system) / 1e3 / mb).toFixed(2)} ms/MB, wall ${(mb / wall).toFixed(1)} MB/s, batches ${batches}`)
await sender.close(); await receiver.close(); await fsp.rm(dir, { recursive: true })
