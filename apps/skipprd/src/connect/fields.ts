/**
 * A connector's fields from `skipprd connect` flags: `--connection-string x` is the YAML key
 * `connection_string`. A value that reads back as the same number or boolean is one (`5432`,
 * `true`); `[a, b]` and `{ k: v }` are YAML lists and maps; anything else stays a string, so
 * `0123` or `1e3` are not silently turned into numbers. A flag with no value is `true`.
 */
import { parse } from 'yaml'
import { ConnectInvalidError } from '../query/errors.js'

export function parseFieldFlags(args: readonly string[]): Record<string, unknown> {
  const fields: Record<string, unknown> = {}
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string
    if (!arg.startsWith('--') || arg.length === 2) {
      throw new ConnectInvalidError(
        `unexpected argument '${arg}': connector fields are given as --<field> <value>`,
      )
    }
    const eq = arg.indexOf('=')
    const flag = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
    let raw: string | undefined
    if (eq !== -1) raw = arg.slice(eq + 1)
    else if (i + 1 < args.length && !(args[i + 1] as string).startsWith('--')) raw = args[++i]
    const key = flag.replaceAll('-', '_')
    if (key in fields) throw new ConnectInvalidError(`--${flag} is given twice: give each field once`)
    fields[key] = raw === undefined ? true : fieldValue(raw)
  }
  return fields
}

export function fieldValue(raw: string): unknown {
  const trimmed = raw.trim()
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    try {
      return parse(trimmed)
    } catch {
      return raw
    }
  }
  let value: unknown
  try {
    value = parse(raw)
  } catch {
    return raw
  }
  return (typeof value === 'number' || typeof value === 'boolean') && String(value) === raw ? value : raw
}
