/**
 * Child process for crash tests: a receiver whose application appends every delivered frame as a line
 * `<senderId> <fsn> <payload>` to a file with fdatasync before the ack, and tells the receiver on
 * connect what the file already holds, so dedup survives SIGKILL. Prints `listening` when ready.
 * Usage: node --import tsx crash-receiver.ts <port> <file>
 */
import {
  closeSync,
  existsSync,
  fdatasyncSync,
  openSync,
  readFileSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import { createReceiver } from '../../src/receiver.js'

const [portText, file] = process.argv.slice(2) as [string, string]

// A kill in the middle of a write can leave a partial last line: that frame was never acked, drop it.
let content = existsSync(file) ? readFileSync(file, 'utf8') : ''
if (!content.endsWith('\n') && content.length > 0) {
  content = content.slice(0, content.lastIndexOf('\n') + 1)
  writeFileSync(file, content)
}
const held = new Map<string, bigint>()
for (const line of content.split('\n').filter(Boolean)) {
  const [id, fsn] = line.split(' ') as [string, string]
  held.set(id, BigInt(fsn))
}

const fd = openSync(file, 'a')
await createReceiver({
  port: Number(portText),
  delivered: (senderId) => held.get(senderId) ?? 0n,
  onFrames: ({ senderId, frames }) => {
    writeSync(fd, frames.map((f) => `${senderId} ${f.fsn} ${Buffer.from(f.payload).toString()}\n`).join(''))
    fdatasyncSync(fd)
    return undefined
  },
  onError: () => {},
})
process.on('SIGTERM', () => {
  closeSync(fd)
  process.exit(0)
})
process.stdout.write('listening\n')
