/**
 * The environment a config is read in: `.env`, then `.env.local`, beside skippr.yml, under the
 * process environment. Precedence, as most tools that read .env files do it: a variable exported
 * in the process wins, then `.env.local` (a machine's own overrides), then `.env` (shared
 * defaults). The process environment itself is never modified.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { ConfigError } from '@skippr/connector-api'
import type { Env } from './interpolate.js'

export const ENV_FILES = ['.env', '.env.local'] as const

export function loadEnv(configDir: string, processEnv: Env): Env {
  const merged: Record<string, string | undefined> = {}
  for (const name of ENV_FILES) Object.assign(merged, readEnvFile(path.join(configDir, name)))
  for (const [key, value] of Object.entries(processEnv)) if (value !== undefined) merged[key] = value
  return merged
}

function readEnvFile(file: string): Record<string, string> {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {}
    throw new ConfigError(`${file}: cannot read: ${(error as Error).message}`, { cause: error })
  }
  return parse(text)
}

/**
 * dotenv, loaded on first use: most configs have no .env file, and importing it costs every
 * command's start-up about 10 ms (Node scans a CommonJS package for its exports on import).
 */
function parse(text: string): Record<string, string> {
  return (createRequire(import.meta.url)('dotenv') as typeof import('dotenv')).parse(text)
}
