/**
 * Sender configuration: the connect string (`ws::addr=host:port;key=value;…;`), the equivalent options
 * object, their validation and defaults. Every problem is one line naming the key as the user wrote it.
 */
import { SenderConfigError } from './errors.js'

export type SfDurability = 'append' | 'periodic'

/** Options accepted by `Sender.fromConfig`; the connect-string keys are the snake_case of these names. */
export interface SenderOptions {
  /** `host:port` of the receiver (port defaults to 9000). */
  addr: string
  /** Use `wss` (TLS). In a connect string, the `wss::` scheme. */
  tls?: boolean
  /** Slot group directory; without it the sender runs in memory mode. */
  sfDir?: string
  senderId?: string
  sfMaxSegmentBytes?: number
  sfMaxTotalBytes?: number
  sfAppendDeadlineMillis?: number
  sfDurability?: SfDurability
  drainOrphans?: boolean
  maxBackgroundDrainers?: number
  /** 0 or -1 skip the drain wait in `close()`. */
  closeFlushTimeoutMillis?: number
  requestDurableAck?: boolean
  reconnectInitialBackoffMillis?: number
  reconnectMaxBackoffMillis?: number
  /** How long an orphan drainer retries before it gives up and writes `.failed`. A sender retries forever. */
  reconnectMaxDurationMillis?: number
  /** Bearer token sent in the upgrade request. */
  token?: string
  /** `false` (`tls_verify=unsafe_off`) accepts any server certificate. */
  tlsVerify?: boolean
  /** Path of a PEM file with the CA certificates to trust for `wss`. */
  tlsRoots?: string
  /** A connection with no traffic (not even a pong) for this long is considered dead. */
  keepaliveIntervalMillis?: number
  /** Error notifications queued for the handler before further ones are counted as dropped. */
  errorInboxCapacity?: number
}

export interface SenderConfig {
  host: string
  port: number
  tls: boolean
  sfDir: string | undefined
  senderId: string
  sfMaxSegmentBytes: number | undefined
  sfMaxTotalBytes: number | undefined
  sfAppendDeadlineMillis: number | undefined
  sfDurability: SfDurability | undefined
  drainOrphans: boolean
  maxBackgroundDrainers: number
  closeFlushTimeoutMillis: number
  requestDurableAck: boolean
  reconnectInitialBackoffMillis: number
  reconnectMaxBackoffMillis: number
  reconnectMaxDurationMillis: number
  token: string | undefined
  tlsVerify: boolean
  tlsRoots: string | undefined
  keepaliveIntervalMillis: number
  errorInboxCapacity: number
}

type Parse = (value: unknown) => unknown

const text: Parse = (v) =>
  typeof v === 'string' && v.length > 0 ? v : problem('expected a non-empty string')

function integer(min: number, what: string): Parse {
  return (v) => {
    const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v
    return typeof n === 'number' && Number.isSafeInteger(n) && n >= min ? n : problem(`expected ${what}`)
  }
}

const positive = integer(1, 'a positive integer')
const segmentBytes: Parse = (v) => {
  const n = integer(256, 'an integer from 256 to 1073741824 (1 GiB)')(v) as number
  return n <= 1024 ** 3 ? n : problem('expected an integer from 256 to 1073741824 (1 GiB)')
}
const nonNegative = integer(0, 'an integer >= 0')

const onOff: Parse = (v) => {
  if (typeof v === 'boolean') return v
  if (v === 'on' || v === 'true') return true
  if (v === 'off' || v === 'false') return false
  return problem("expected 'on' or 'off'")
}

const tlsVerify: Parse = (v) => {
  if (typeof v === 'boolean') return v
  if (v === 'on') return true
  if (v === 'unsafe_off') return false
  return problem("expected 'on' or 'unsafe_off'")
}

const durability: Parse = (v) =>
  v === 'append' || v === 'periodic' ? v : problem("expected 'append' or 'periodic'")

// A sender id names a directory under sf_dir and travels in the protocol's HELLO message.
const senderId: Parse = (v) =>
  typeof v === 'string' && /^[A-Za-z0-9_.-]{1,128}$/.test(v) && v !== '.' && v !== '..'
    ? v
    : problem('expected 1-128 characters from A-Z a-z 0-9 _ . - (it names a directory)')

const closeTimeout: Parse = (v) => integer(-1, 'a timeout in milliseconds (0 or -1 skip the wait)')(v)

const FIELDS: Record<Exclude<keyof SenderOptions, 'tls'>, Parse> = {
  addr: text,
  sfDir: text,
  senderId,
  sfMaxSegmentBytes: segmentBytes,
  sfMaxTotalBytes: positive,
  sfAppendDeadlineMillis: nonNegative,
  sfDurability: durability,
  drainOrphans: onOff,
  maxBackgroundDrainers: positive,
  closeFlushTimeoutMillis: closeTimeout,
  requestDurableAck: onOff,
  reconnectInitialBackoffMillis: positive,
  reconnectMaxBackoffMillis: positive,
  reconnectMaxDurationMillis: positive,
  token: text,
  tlsVerify,
  tlsRoots: text,
  keepaliveIntervalMillis: positive,
  errorInboxCapacity: positive,
}

const snake = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
const BY_CONNECT_KEY = new Map(Object.keys(FIELDS).map((k) => [snake(k), k as keyof typeof FIELDS]))

class Problem {
  constructor(readonly text: string) {}
}
function problem(message: string): never {
  throw new Problem(message)
}

/** Parses `ws::addr=host:port;key=value;…;` (`;;` inside a value is a literal `;`). */
export function parseConnectString(connect: string): SenderOptions {
  const sep = connect.indexOf('::')
  const scheme = sep < 0 ? '' : connect.slice(0, sep)
  if (scheme !== 'ws' && scheme !== 'wss') {
    throw new SenderConfigError('scheme', `expected the connect string to start with 'ws::' or 'wss::'`)
  }
  const options: Record<string, unknown> = { tls: scheme === 'wss' }
  for (const [key, raw] of splitPairs(connect.slice(sep + 2))) {
    const field = BY_CONNECT_KEY.get(key)
    if (field === undefined) {
      throw new SenderConfigError(key, `unknown key; known keys: ${[...BY_CONNECT_KEY.keys()].join(', ')}`)
    }
    if (field in options) throw new SenderConfigError(key, 'given more than once')
    options[field] = check(key, FIELDS[field], raw)
  }
  if (options.addr === undefined) throw new SenderConfigError('addr', 'missing; add addr=host:port;')
  return options as unknown as SenderOptions
}

function splitPairs(body: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = []
  let current = ''
  for (let i = 0; i < body.length; i++) {
    const c = body[i]
    if (c === ';' && body[i + 1] === ';') {
      current += ';'
      i++
    } else if (c === ';') {
      pairs.push(splitPair(current))
      current = ''
    } else {
      current += c
    }
  }
  if (current.trim() !== '') pairs.push(splitPair(current))
  return pairs
}

function splitPair(pair: string): [string, string] {
  const eq = pair.indexOf('=')
  if (eq <= 0) throw new SenderConfigError(pair.trim() || '(empty)', "expected key=value separated by ';'")
  return [pair.slice(0, eq).trim(), pair.slice(eq + 1)]
}

function check(key: string, parse: Parse, value: unknown): unknown {
  try {
    return parse(value)
  } catch (e) {
    if (e instanceof Problem) throw new SenderConfigError(key, `${e.text}, got ${JSON.stringify(value)}`)
    throw e
  }
}

/** Validates an options object (or the output of `parseConnectString`) and fills in the defaults. */
export function resolveSenderConfig(
  options: SenderOptions,
  nameKey: (field: string) => string = (f) => f,
): SenderConfig {
  const o: Record<string, unknown> = {}
  for (const [field, value] of Object.entries(options)) {
    if (field === 'tls') {
      if (value !== undefined && typeof value !== 'boolean')
        throw new SenderConfigError(nameKey(field), 'expected a boolean')
      continue
    }
    const parse = FIELDS[field as keyof typeof FIELDS]
    if (parse === undefined) throw new SenderConfigError(nameKey(field), 'unknown option')
    if (value !== undefined) o[field] = check(nameKey(field), parse, value)
  }
  if (o.addr === undefined)
    throw new SenderConfigError(nameKey('addr'), 'missing; give the receiver as host:port')
  const { host, port } = parseAddr(nameKey('addr'), o.addr as string)
  if (o.drainOrphans === true && o.sfDir === undefined) {
    throw new SenderConfigError(nameKey('drainOrphans'), 'needs sf_dir: memory mode has no slots to drain')
  }
  const segment = (o.sfMaxSegmentBytes as number | undefined) ?? 4 * 1024 * 1024
  const total = o.sfMaxTotalBytes as number | undefined
  // A disk slot needs room for the active segment and the next one.
  if (o.sfDir !== undefined && total !== undefined && total < 2 * segment) {
    throw new SenderConfigError(
      nameKey('sfMaxTotalBytes'),
      `must be at least twice sf_max_segment_bytes (${2 * segment})`,
    )
  }
  const initial = (o.reconnectInitialBackoffMillis as number | undefined) ?? 100
  const max = (o.reconnectMaxBackoffMillis as number | undefined) ?? 5000
  if (max < initial) {
    throw new SenderConfigError(
      nameKey('reconnectMaxBackoffMillis'),
      `must be >= the initial backoff (${initial} ms)`,
    )
  }
  return {
    host,
    port,
    tls: options.tls ?? false,
    sfDir: o.sfDir as string | undefined,
    senderId: (o.senderId as string | undefined) ?? 'default',
    sfMaxSegmentBytes: o.sfMaxSegmentBytes as number | undefined,
    sfMaxTotalBytes: o.sfMaxTotalBytes as number | undefined,
    sfAppendDeadlineMillis: o.sfAppendDeadlineMillis as number | undefined,
    sfDurability: o.sfDurability as SfDurability | undefined,
    drainOrphans: (o.drainOrphans as boolean | undefined) ?? false,
    maxBackgroundDrainers: (o.maxBackgroundDrainers as number | undefined) ?? 4,
    closeFlushTimeoutMillis: (o.closeFlushTimeoutMillis as number | undefined) ?? 5000,
    requestDurableAck: (o.requestDurableAck as boolean | undefined) ?? false,
    reconnectInitialBackoffMillis: initial,
    reconnectMaxBackoffMillis: max,
    reconnectMaxDurationMillis: (o.reconnectMaxDurationMillis as number | undefined) ?? 300_000,
    token: o.token as string | undefined,
    tlsVerify: (o.tlsVerify as boolean | undefined) ?? true,
    tlsRoots: o.tlsRoots as string | undefined,
    keepaliveIntervalMillis: (o.keepaliveIntervalMillis as number | undefined) ?? 10_000,
    errorInboxCapacity: (o.errorInboxCapacity as number | undefined) ?? 256,
  }
}

/** Reads a connect string or an options object into a complete config. */
export function senderConfigFrom(config: string | SenderOptions): SenderConfig {
  if (typeof config === 'string') return resolveSenderConfig(parseConnectString(config), snake)
  return resolveSenderConfig(config)
}

function parseAddr(key: string, addr: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d+))?$/.exec(addr)
  const port = m?.[2] === undefined ? 9000 : Number(m[2])
  if (m === null || port < 1 || port > 65535) {
    throw new SenderConfigError(key, `expected host:port (port 1-65535), got ${JSON.stringify(addr)}`)
  }
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port }
}
