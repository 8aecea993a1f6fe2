import * as fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createReceiver, Sender } from '../../packages/sf/src/index.js'
const size = Number(process.env.SIZE ?? 65536), count = Number(process.env.COUNT ?? 4000)
const noTrim = process.env.NOTRIM === '1'
let delivered = 0
const receiver = await createReceiver({ port: 0, durableAck: noTrim ? 'manual' : 'with-ack', onFrames: ({ frames }) => { delivered += frames.length; return undefined } })
const sfDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'prof-'))
const sender = await Sender.fromConfig(`ws::addr=127.0.0.1:${receiver.port};sf_dir=${sfDir};request_durable_ack=${noTrim ? 'on' : 'off'};close_flush_timeout_millis=0;`)
const payload = Buffer.alloc(size, 7); const W = Math.max(1, Math.floor(4 * 1024 * 1024 / size))
const t = performance.now()
for (let i = 0; i < count; i += W) await Promise.all(Array.from({ length: Math.min(W, count - i) }, () => sender.sendBlocking(payload)))
const tAppend = performance.now()
while (delivered < count) await new Promise((r) => setTimeout(r, 5))
const s = (performance.now() - t) / 1000
console.log(`${noTrim ? 'no-trim' : 'trim'} ${count} x ${size}: ${(count * size / 1e6 / s).toFixed(1)} MB/s delivered; append phase ${((tAppend - t)/1000).toFixed(2)}s`)
await sender.close(); await receiver.close(); await fsp.rm(sfDir, { recursive: true })
