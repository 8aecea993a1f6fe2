import * as fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createReceiver, Sender } from '@skippr/sf'

const size = Number(process.env.SZ ?? 65536)
const total = Number(process.env.MBS ?? 256) * 1e6
const count = Math.floor(total / size)
const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'skippr-prof-'))
let delivered = 0
const acks = 0
const receiver = await createReceiver({
  port: 0,
  onFrames: ({ frames }) => {
    delivered += frames.length
    return undefined
  },
})
const sender = await Sender.fromConfig(
  `ws::addr=127.0.0.1:${process.env.NORECV ? 1 : receiver.port};sf_dir=${root};sf_durability=append;`,
)
const payload = Buffer.alloc(size, 7)
const window = Math.max(1, Math.floor((4 * 1024 * 1024) / size))
const t0 = performance.now()
let appendWait = 0
const lat: number[] = []
for (let i = 0; i < count; i += window) {
  const a = performance.now()
  await Promise.all(Array.from({ length: Math.min(window, count - i) }, () => sender.sendBlocking(payload)))
  appendWait += performance.now() - a
  lat.push(performance.now() - a)
}
const tAppended = performance.now()
if (!process.env.NORECV) await sender.flush()
const t1 = performance.now()
console.log(
  `size ${size} count ${count}: ${(total / 1e6 / ((t1 - t0) / 1000)).toFixed(1)} MB/s; appends done at ${(tAppended - t0).toFixed(0)} ms, flushed at ${(t1 - t0).toFixed(0)} ms, delivered ${delivered}`,
)
console.log('window ms:', lat.slice(5, 45).map((x) => x.toFixed(0)).join(' '))
await sender.close().catch(() => {})
await receiver.close()
await fsp.rm(root, { recursive: true, force: true })
