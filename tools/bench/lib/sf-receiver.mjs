// The receiving side of the sf-send bench, in a process of its own as a real server would be: a raw
// `ws` server counting bytes, or an @skippr/sf Receiver whose application counts frames. It prints
// one JSON line when listening ({"port"}), one when the first `warmup` units have arrived ({"warmAt"})
// and one when all `total` have ({"doneAt", "units"}); times are this machine's clock in ms, so the
// sender's process can set them against its own. Timing the steady part here, where the data
// arrives, treats both sides alike: neither sender's buffering counts.
// Usage: node lib/sf-receiver.mjs raw|sf <warmup> <total>   (bytes for raw, frames for sf)
import { createReceiver } from '@skippr/sf'
import { WebSocketServer } from 'ws'

const [mode, warmupText, totalText] = process.argv.slice(2)
const warmup = Number(warmupText)
const total = Number(totalText)
const now = () => performance.timeOrigin + performance.now()
const print = (line) => console.log(JSON.stringify(line))

let units = 0
/** Counts what arrived; prints the warm-up mark and the end once each is passed. */
function arrived(n) {
  const before = units
  units += n
  if (before < warmup && units >= warmup) print({ warmAt: now() })
  if (before < total && units >= total) print({ doneAt: now(), units })
}

if (mode === 'raw') {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false })
  server.on('listening', () => print({ port: server.address().port }))
  server.on('connection', (ws) => ws.on('message', (data) => arrived(data.length)))
} else {
  const receiver = await createReceiver({
    port: 0,
    onFrames: ({ frames }) => {
      arrived(frames.length)
      return undefined
    },
  })
  print({ port: receiver.port })
}
