// The receiving side of the sf-send bench, in a process of its own as a real server would be: a raw
// `ws` server that answers "done" once it has `total` bytes, or an @skippr/sf Receiver that prints
// {"delivered": n} once its application has `total` frames. Prints {"port": p} when listening.
// Usage: node lib/sf-receiver.mjs raw|sf <total>
import { createReceiver } from '@skippr/sf'
import { WebSocketServer } from 'ws'

const [mode, totalText] = process.argv.slice(2)
const total = Number(totalText)
if (mode === 'raw') {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false })
  server.on('listening', () => console.log(JSON.stringify({ port: server.address().port })))
  server.on('connection', (ws) => {
    let received = 0
    ws.on('message', (data) => {
      received += data.length
      if (received === total) ws.send('done')
    })
  })
} else {
  let delivered = 0
  const receiver = await createReceiver({
    port: 0,
    onFrames: ({ frames }) => {
      delivered += frames.length
      if (delivered === total) console.log(JSON.stringify({ delivered }))
      return undefined
    },
  })
  console.log(JSON.stringify({ port: receiver.port }))
}
