import { parseConnectorConfig } from '@skippr/connector-api'
import { describe, expect, it } from 'vitest'
import { listenAddress } from '../src/config.js'
import { source } from '../src/index.js'

const parse = (fields: Record<string, unknown>) =>
  parseConnectorConfig(source, fields, { file: 'skippr.yml', path: 'data_sources.app.Websocket' })

describe('Websocket config', () => {
  it('fills in the defaults', () => {
    expect(parse({ namespace: 'events' })).toEqual({
      listen: '127.0.0.1:9000',
      format: 'jsonl',
      namespace: 'events',
      max_frame_bytes: 16 * 1024 * 1024,
      commit_interval_ms: 20,
    })
  })

  it('refuses a listen address without a port, and tls_cert without tls_key, naming the field', () => {
    expect(() => parse({ namespace: 'events', listen: 'localhost' })).toThrow(/listen.*host:port/)
    expect(() => parse({ namespace: 'events', tls_cert: 'cert.pem' })).toThrow(/tls_key.*go together/)
  })

  it('keeps the token a secret field', () => {
    expect(source.secretFields).toEqual(['token'])
  })

  it('splits host and port, IPv6 in brackets too', () => {
    expect(listenAddress('0.0.0.0:9000')).toEqual({ host: '0.0.0.0', port: 9000 })
    expect(listenAddress('[::1]:9001')).toEqual({ host: '::1', port: 9001 })
  })
})
