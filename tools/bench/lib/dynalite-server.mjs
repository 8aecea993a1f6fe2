// dynalite (@skippr/test-servers' startDynalite, in memory) in a process of its own, so that the
// bench can read its CPU time apart from its clients', as if it ran on another host. Prints its
// endpoint as one JSON line, and stops when its standard input ends: when the bench closes it, or
// when the bench dies, however it died.
// Plain JavaScript, so no loader runs beside it.
// Usage: node lib/dynalite-server.mjs   (lib/dynalite-process.ts starts it)
import { startDynalite } from '@skippr/test-servers'

const server = await startDynalite()
process.stdout.write(`${JSON.stringify({ endpoint: server.endpoint })}\n`)
process.stdin.on('end', () => {
  server.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  )
})
process.stdin.resume()
