import { crossFieldCheck } from '@skippr/connector-api'
import * as v from 'valibot'

export const DEFAULT_LISTEN = '127.0.0.1:9000'
export const DEFAULT_COMMIT_INTERVAL_MS = 20
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024

export const websocketConfig = v.pipe(
  v.strictObject({
    listen: v.optional(
      v.pipe(
        v.string(),
        v.regex(/^(\[[0-9a-fA-F:.]+\]|[^:\s[\]]+):\d{1,5}$/, 'expected host:port, e.g. 0.0.0.0:9000'),
        v.description(
          `host:port to accept senders on (default ${DEFAULT_LISTEN}); a Sender uses ws::addr=<listen>;`,
        ),
      ),
      DEFAULT_LISTEN,
    ),
    format: v.optional(
      v.pipe(
        v.picklist(['jsonl', 'json', 'csv', 'bytes']),
        v.description(
          'What each record (one Sender.send) holds: JSON lines, a JSON object or array, CSV with a header line, or bytes kept as they are in one column',
        ),
      ),
      'jsonl',
    ),
    namespace: v.pipe(
      v.string(),
      v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected letters, digits and _ (a table name)'),
      v.description('The namespace (table) the records land in'),
    ),
    token: v.optional(
      v.pipe(
        v.string(),
        v.minLength(1),
        v.description(
          'Bearer token a Sender must present (its token=…); a secret, so a reference to an environment variable',
        ),
      ),
    ),
    tls_cert: v.optional(
      v.pipe(
        v.string(),
        v.minLength(1),
        v.description('PEM certificate file (relative to skippr.yml) to serve wss; needs tls_key'),
      ),
    ),
    tls_key: v.optional(
      v.pipe(v.string(), v.minLength(1), v.description('PEM private key file of tls_cert')),
    ),
    max_frame_bytes: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1024),
        v.maxValue(1024 ** 3),
        v.description(
          `Largest message a sender may send, in bytes (default ${DEFAULT_MAX_FRAME_BYTES}); a record must fit in one`,
        ),
      ),
      DEFAULT_MAX_FRAME_BYTES,
    ),
    forget_senders_after_ms: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1),
        v.description(
          "Drop a sender's in-memory state after it has been away this long (default: keep it); dedup stays exact, from the committed offset",
        ),
      ),
    ),
    commit_interval_ms: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1),
        v.maxValue(60_000),
        v.description(
          `How long received records wait to be committed together (one fsync for all of them) before senders get their acks (default ${DEFAULT_COMMIT_INTERVAL_MS})`,
        ),
      ),
      DEFAULT_COMMIT_INTERVAL_MS,
    ),
  }),
  crossFieldCheck((config) =>
    (config.tls_cert === undefined) === (config.tls_key === undefined)
      ? []
      : [
          {
            path: [config.tls_cert === undefined ? 'tls_cert' : 'tls_key'],
            message: 'tls_cert and tls_key go together: give both to serve wss, or neither',
          },
        ],
  ),
)

export type WebsocketConfig = v.InferOutput<typeof websocketConfig>

/** `listen` as host and port; `[::1]:9000` gives host `::1`. */
export function listenAddress(listen: string): { host: string; port: number } {
  const at = listen.lastIndexOf(':')
  const host = listen.slice(0, at).replace(/^\[(.*)\]$/, '$1')
  return { host, port: Number(listen.slice(at + 1)) }
}
