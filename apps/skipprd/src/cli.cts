#!/usr/bin/env node
/**
 * The `skipprd` command line. `skipprd --help` prints help.txt, written at build time from the
 * same commander program (build-help.ts), and loads nothing else: it starts about as fast as Node
 * itself. CommonJS for that reason: Node starts an ES module entry about 15 ms slower. Every other
 * command line goes to commander (program.ts, an ES module).
 */
import fs = require('node:fs')
import path = require('node:path')

// The AWS SDK warns on stderr, at its first client, that later releases will need Node 22: skipprd
// supports Node 20, and stderr is for what the operator must act on.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'

const args = process.argv.slice(2)
if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) {
  process.stdout.write(fs.readFileSync(path.join(__dirname, 'help.txt')))
} else {
  import('./program.js')
    .then(({ run }) => run(process.argv))
    // Connections and timers a connector leaves behind must not keep a finished command alive. But
    // process.exit drops what a pipe has not taken yet (`skipprd df | …` would lose its tail), so
    // stdout and stderr get everything first.
    .then((code) => Promise.all([flushed(process.stdout), flushed(process.stderr)]).then(() => code))
    .then((code) => process.exit(code))
}

/** Resolves once everything written to `stream` so far is handed to the OS, or the stream is gone. */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.writableLength === 0 || stream.destroyed) resolve()
    else stream.write('', () => resolve())
  })
}
