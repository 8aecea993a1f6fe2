import * as v from 'valibot'

const HOST_PORT = /^(\[[0-9a-fA-F:]+\]|[^:\s]+):(\d{1,5})$/

export const httpServerConfig = v.pipe(
  v.strictObject({
    listen: v.optional(
      v.pipe(v.string(), v.regex(HOST_PORT, 'expected host:port'), v.description('host:port to listen on')),
      '127.0.0.1:8080',
    ),
    format: v.optional(
      v.pipe(
        v.picklist(['jsonl', 'json', 'csv']),
        v.description(
          'Request bodies: JSON lines, JSON (an object or an array of them), or CSV with a header',
        ),
      ),
      'jsonl',
    ),
    namespace: v.optional(
      v.pipe(
        v.string(),
        v.minLength(1),
        v.description('Namespace of every request; unset, a request names it by its path, POST /<namespace>'),
      ),
    ),
    token: v.optional(
      v.pipe(v.string(), v.minLength(1), v.description('Bearer token every request must send (a secret)')),
    ),
    tls_cert: v.optional(
      v.pipe(v.string(), v.minLength(1), v.description('PEM certificate file: serve HTTPS')),
    ),
    tls_key: v.optional(
      v.pipe(v.string(), v.minLength(1), v.description('PEM private key file of tls_cert')),
    ),
    max_request_bytes: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1),
        v.description('Largest request body; larger ones get 413'),
      ),
      10 * 1024 * 1024,
    ),
    commit_interval_ms: v.optional(
      v.pipe(
        v.number(),
        v.gtValue(0),
        v.description(
          'Requests are committed together at least this often; each is answered after its commit',
        ),
      ),
      20,
    ),
    max_pending_bytes: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1),
        v.description('Request bytes that may wait for their commit; beyond it requests get 429'),
      ),
      64 * 1024 * 1024,
    ),
    idempotency_window_seconds: v.optional(
      v.pipe(
        v.number(),
        v.gtValue(0),
        v.description('How long a committed Idempotency-Key is remembered (it travels in every commit)'),
      ),
      600,
    ),
    idempotency_max_keys: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(1),
        v.description('Most Idempotency-Keys remembered; the oldest are forgotten first'),
      ),
      10_000,
    ),
  }),
  v.check(
    (config) => (config.tls_cert === undefined) === (config.tls_key === undefined),
    'set tls_cert and tls_key together',
  ),
)

export type HttpServerConfig = v.InferOutput<typeof httpServerConfig>

/** `host:port` as node:net wants them (an IPv6 host without its brackets). */
export function listenAddress(listen: string): { host: string; port: number } {
  const [, host, port] = HOST_PORT.exec(listen) as RegExpExecArray
  return { host: (host as string).replace(/^\[|\]$/g, ''), port: Number(port) }
}
