/** `--metrics-addr` / `SKIPPR_METRICS_ADDR`: `host:port`, or a bare port, which binds 127.0.0.1. */
import { ConfigError } from '@skippr/connector-api'

export interface ListenAddress {
  readonly host: string
  readonly port: number
}

export function parseMetricsAddress(value: string): ListenAddress {
  const text = value.trim()
  const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(text)
  const port = Number(match?.[2])
  if (!match || port < 1 || port > 65535)
    throw new ConfigError(
      `--metrics-addr ${JSON.stringify(value)}: expected a port (e.g. 9464, on 127.0.0.1) or host:port (e.g. 0.0.0.0:9464)`,
    )
  const host = match[1]?.replace(/^\[|\]$/g, '') ?? '127.0.0.1'
  return { host, port }
}
