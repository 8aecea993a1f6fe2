/** The built `skipprd` CLI, and an environment that cannot steer it away from the bench's config. */
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

export function skipprdCli(): string {
  const manifest = createRequire(import.meta.url).resolve('skipprd/package.json')
  const bin = (JSON.parse(readFileSync(manifest, 'utf8')) as { bin: { skipprd: string } }).bin.skipprd
  const cli = path.resolve(path.dirname(manifest), bin)
  if (!existsSync(cli))
    throw new Error(`${cli} missing: run pnpm turbo run build --filter=@skippr/bench... first`)
  return cli
}

/** The bench's environment minus skipprd's own variables, so every run has the defaults. */
export function defaultsEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(SKIPPR_|DATA_DIR$|PIPELINE_NAME$|WAL_|BUFFER_THRESHOLD_)/.test(name)) env[name] = value
  }
  return { ...env, ...extra }
}
