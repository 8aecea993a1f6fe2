/**
 * Build step (`pnpm build`, after tsc and build-help): bundles the `skipprd` command into bin/, the
 * package's `bin`: the entry (cli.cts, CommonJS) as it is, and beside it the ES modules it imports,
 * bundled. Node loads an ES module file by file, and resolving, reading and compiling each of the
 * files a sync imports cost about 100 ms of every start (a 100-row sync into DuckDB: 714 against 816
 * ms, medians of 11 runs on a slow 2-core machine). The bundle is split at the same lazy imports as the
 * sources (a command, the progress display), so `--help` still loads almost nothing.
 *
 * Left outside, resolved from node_modules as before:
 * - connector packages, which skipprd loads by type name (connectors.ts), and which users install.
 *   They load their own copy of @skippr/connector-api beside the bundle's, which is why its errors
 *   are matched by code, never by class;
 * - native addons and the packages that load them, which find their binaries beside their own files.
 *
 * bin/ sits beside dist/, so paths a module takes from its own location (`../package.json`,
 * `./help.txt`) mean the same in both. dist/ stays the programmatic API (`import { Session } from
 * 'skipprd'`), unbundled, so its users share one copy of each dependency with their own code.
 */
import { copyFileSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const dist = (file: string) => fileURLToPath(new URL(`./${file}`, import.meta.url))
const bin = fileURLToPath(new URL('../bin/', import.meta.url))

rmSync(bin, { recursive: true, force: true })
await build({
  entryPoints: [dist('program.js')],
  outdir: bin,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['@skippr/source-*', '@skippr/sink-*', '@duckdb/*', 'lmdb', '@node-rs/*'],
  // Bundled CommonJS dependencies (commander, pino) call require() for Node's own modules.
  banner: {
    js: "import { createRequire as createBundleRequire } from 'node:module'; const require = createBundleRequire(import.meta.url);",
  },
  logLevel: 'warning',
})
for (const file of ['cli.cjs', 'cli.cjs.map', 'help.txt']) copyFileSync(dist(file), bin + file)
