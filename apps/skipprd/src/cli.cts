#!/usr/bin/env node
/**
 * The `skipprd` command line. `skipprd --help` prints help.txt, written at build time from the
 * same commander program (build-help.ts), and loads nothing else: it starts about as fast as Node
 * itself. Every other command line goes to commander (program.ts).
 */
import { readFileSync } from 'node:fs'

const args = process.argv.slice(2)
if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) {
  process.stdout.write(readFileSync(new URL('./help.txt', import.meta.url)))
} else {
  const { run } = await import('./program.js')
  const code = await run(process.argv)
  // Connections and timers a connector leaves behind must not keep a finished command alive.
  process.exit(code)
}
