// A clustered-WAL peer (@skippr/wal-cluster's startWalPeer) in a process of its own, as a peer on
// another host runs, so its CPU time is its own. Prints `{ url }` as one JSON line, and stops when
// its standard input ends: when the bench closes it, or when the bench dies, however it died.
// Plain JavaScript, so no loader runs beside it.
// Usage: node lib/wal-peer-server.mjs <dataDir> <secret>   (lib/wal-peer-process.ts starts it)
import { startWalPeer } from '@skippr/wal-cluster'

const [dataDir, secret] = process.argv.slice(2)
const quiet = { info: () => {}, warn: () => {}, error: (message) => console.error(message) }
const peer = await startWalPeer({ dataDir, secret, logger: quiet })
process.stdout.write(`${JSON.stringify({ url: peer.url })}\n`)
process.stdin.on('end', () => {
  peer.close().then(
    () => process.exit(0),
    () => process.exit(1),
  )
})
process.stdin.resume()
