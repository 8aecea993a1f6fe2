// The raw limit of the http-push bench, in a process of its own as skipprd is: a bare node:http
// server that answers a request only once its body is durable, with the same group commit as the
// HttpServer source: the first request of a group arms a timer of `windowMs`; when it fires, every
// body that arrived meanwhile is appended to one file with one writev and fdatasync'd, then each
// request of the group is answered 200. Requests arriving during the write form the next group,
// written once this one is synced.
// Prints {"port"} once listening and {"requests","bytes"} on SIGTERM, then exits.
// Usage: node lib/http-fsync-server.mjs <file> <windowMs>

import { open } from 'node:fs/promises'
import { createServer } from 'node:http'

const [file, windowText] = process.argv.slice(2)
const windowMs = Number(windowText)
const handle = await open(file, 'w')
let position = 0
let group = []
let timer
let requests = 0
let bytes = 0
/** One group is written and synced at a time, as the WAL commits one batch at a time. */
let writing = Promise.resolve()

async function flush() {
  timer = undefined
  const done = group
  group = []
  await writing
  const bodies = done.map((entry) => entry.body)
  let length = 0
  for (const body of bodies) length += body.length
  await handle.writev(bodies, position)
  position += length
  await handle.datasync()
  requests += done.length
  bytes += length
  for (const { response } of done)
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"rows":8}\n')
}

const server = createServer((request, response) => {
  const pieces = []
  request.on('data', (piece) => pieces.push(piece))
  request.on('end', () => {
    group.push({ body: Buffer.concat(pieces), response })
    if (timer === undefined)
      timer = setTimeout(() => {
        writing = flush()
      }, windowMs)
  })
})
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })))
process.on('SIGTERM', () => {
  // The group being written finishes first: its file handle stays open until then.
  void writing.then(async () => {
    console.log(JSON.stringify({ requests, bytes }))
    await handle.close()
    process.exit(0)
  })
})
