/**
 * The environment a config is read in: the process environment, `.env` and `.env.local` beside
 * the config file. `.env` holds defaults: it fills a variable the process leaves unset or empty
 * (an empty export is how a shell or a container usually says "not given"). `.env.local` is this
 * machine's own word and overrides everything, the process environment included. The process
 * environment itself is never modified.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { ConfigError } from '@skippr/connector-api'
import type { Env } from './interpolate.js'

export function loadEnv(configDir: string, processEnv: Env): Env {
  const merged: Record<string, string | undefined> = { ...processEnv }
  for (const [key, value] of Object.entries(readEnvFile(path.join(configDir, '.env'))))
    if (!merged[key]) merged[key] = value
  return { ...merged, ...readEnvFile(path.join(configDir, '.env.local')) }
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
