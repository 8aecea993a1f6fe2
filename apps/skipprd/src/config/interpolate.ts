/**
 * `${NAME}` references: a whole YAML value that names an environment variable. A reference inside
 * a longer string is refused, so a value is either literal or entirely from the environment —
 * which is what lets secret fields insist on references and lets logs redact their values.
 */
import { ConfigError } from '@skippr/connector-api'
import { EnvEmptyError, EnvNotSetError } from '../errors.js'

const WHOLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/
const ANY = /\$\{[^}]*\}/

export type Env = Readonly<Record<string, string | undefined>>

/** The variable a value refers to, when it is a whole `${NAME}` reference. */
export function referenceName(value: unknown): string | undefined {
  return typeof value === 'string' ? WHOLE.exec(value)?.[1] : undefined
}

export interface Interpolated {
  readonly value: unknown
  /** Dotted paths (relative to the interpolated value) that came from a reference, and the variable. */
  readonly references: ReadonlyMap<string, string>
}

/** Replaces every whole `${NAME}` in `value` with the variable's text; `where` prefixes errors. */
export function interpolate(value: unknown, env: Env, file: string, path: string): Interpolated {
  const references = new Map<string, string>()
  const walk = (node: unknown, at: string[]): unknown => {
    if (typeof node === 'string') return substitute(node, env, file, [path, ...at], references)
    if (Array.isArray(node)) return node.map((item, i) => walk(item, [...at, String(i)]))
    if (node !== null && typeof node === 'object') {
      const out: Record<string, unknown> = {}
      for (const [key, item] of Object.entries(node)) out[key] = walk(item, [...at, key])
      return out
    }
    return node
  }
  return { value: walk(value, []), references }
}

function substitute(
  text: string,
  env: Env,
  file: string,
  at: string[],
  references: Map<string, string>,
): string {
  const where = `${file}: ${at.filter(Boolean).join('.')}`
  const name = referenceName(text)
  if (name === undefined) {
    if (ANY.test(text))
      throw new ConfigError(
        `${where}: a \${NAME} reference must be the whole value: move the whole value into the environment variable`,
      )
    return text
  }
  const resolved = env[name]
  if (resolved === undefined) throw new EnvNotSetError(where, name)
  if (resolved === '') throw new EnvEmptyError(where, name)
  references.set(at.slice(1).join('.'), name)
  return resolved
}
