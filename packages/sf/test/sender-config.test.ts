import { describe, expect, it } from 'vitest'
import { senderConfigFrom } from '../src/sender-config.js'

function failure(config: Parameters<typeof senderConfigFrom>[0]): {
  code: string
  message: string
  key: string
} {
  try {
    senderConfigFrom(config)
  } catch (e) {
    return e as { code: string; message: string; key: string }
  }
  throw new Error('expected the config to be rejected')
}

describe('sender configuration', () => {
  it('reads every connect-string key', () => {
    const c = senderConfigFrom(
      'wss::addr=example.test:9443;sf_dir=/data/sf;sender_id=orders;sf_max_segment_bytes=1048576;' +
        'sf_max_total_bytes=67108864;sf_append_deadline_millis=2500;sf_durability=periodic;drain_orphans=on;' +
        'max_background_drainers=2;close_flush_timeout_millis=-1;request_durable_ack=on;' +
        'reconnect_initial_backoff_millis=50;reconnect_max_backoff_millis=800;reconnect_max_duration_millis=9000;' +
        'token=s3cr;;et;tls_verify=unsafe_off;tls_roots=/etc/ca.pem;keepalive_interval_millis=750;error_inbox_capacity=8;',
    )
    expect(c).toEqual({
      host: 'example.test',
      port: 9443,
      tls: true,
      sfDir: '/data/sf',
      senderId: 'orders',
      sfMaxSegmentBytes: 1048576,
      sfMaxTotalBytes: 67108864,
      sfAppendDeadlineMillis: 2500,
      sfDurability: 'periodic',
      drainOrphans: true,
      maxBackgroundDrainers: 2,
      closeFlushTimeoutMillis: -1,
      requestDurableAck: true,
      reconnectInitialBackoffMillis: 50,
      reconnectMaxBackoffMillis: 800,
      reconnectMaxDurationMillis: 9000,
      token: 's3cr;et',
      tlsVerify: false,
      tlsRoots: '/etc/ca.pem',
      keepaliveIntervalMillis: 750,
      errorInboxCapacity: 8,
    })
  })

  it('defaults to memory mode, sender id default and the documented timings', () => {
    const c = senderConfigFrom('ws::addr=127.0.0.1:9000;')
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 9000,
      tls: false,
      sfDir: undefined,
      senderId: 'default',
      drainOrphans: false,
      maxBackgroundDrainers: 4,
      closeFlushTimeoutMillis: 5000,
      requestDurableAck: false,
      reconnectInitialBackoffMillis: 100,
      reconnectMaxBackoffMillis: 5000,
      tlsVerify: true,
    })
    expect(senderConfigFrom('ws::addr=[::1]').port).toBe(9000)
    expect(senderConfigFrom('ws::addr=[::1]:1').host).toBe('::1')
  })

  it('accepts the same settings as an options object', () => {
    const c = senderConfigFrom({
      addr: 'localhost:1234',
      sfDir: '/x',
      senderId: 'a',
      requestDurableAck: true,
    })
    expect(c).toMatchObject({
      host: 'localhost',
      port: 1234,
      sfDir: '/x',
      senderId: 'a',
      requestDurableAck: true,
    })
  })

  it.each([
    ['http::addr=h:1;', 'scheme', /start with 'ws::' or 'wss::'/],
    ['ws::sf_dir=/x;', 'addr', /missing/],
    ['ws::addr=h:1;sf_dri=/x;', 'sf_dri', /unknown key; known keys: addr, sf_dir/],
    ['ws::addr=h:1;sf_max_total_bytes=12k;', 'sf_max_total_bytes', /expected a positive integer, got "12k"/],
    ['ws::addr=h:1;sf_max_total_bytes=0;', 'sf_max_total_bytes', /positive integer/],
    ['ws::addr=h:1;drain_orphans=yes;', 'drain_orphans', /expected 'on' or 'off'/],
    ['ws::addr=h:1;drain_orphans=on;', 'drain_orphans', /needs sf_dir/],
    ['ws::addr=h:99999;', 'addr', /port 1-65535/],
    ['ws::addr=h:1;sender_id=../etc;', 'sender_id', /names a directory/],
    ['ws::addr=h:1;close_flush_timeout_millis=-2;', 'close_flush_timeout_millis', /0 or -1 skip/],
    ['ws::addr=h:1;tls_verify=off;', 'tls_verify', /'on' or 'unsafe_off'/],
    ['ws::addr=h:1;sf_durability=never;', 'sf_durability', /'append' or 'periodic'/],
    ['ws::addr=h:1;addr=h:2;', 'addr', /more than once/],
    ['ws::addr=h:1;garbage;', 'garbage', /key=value/],
    ['ws::addr=h:1;sf_max_segment_bytes=100;', 'sf_max_segment_bytes', /from 256 to 1073741824/],
    [
      'ws::addr=h:1;sf_dir=/x;sf_max_total_bytes=1000;',
      'sf_max_total_bytes',
      /at least twice sf_max_segment_bytes \(8388608\)/,
    ],
    [
      'ws::addr=h:1;reconnect_max_backoff_millis=10;',
      'reconnect_max_backoff_millis',
      /initial backoff \(100 ms\)/,
    ],
  ])('rejects %s with one line naming %s', (input, key, pattern) => {
    const e = failure(input)
    expect(e.code).toBe('SF_CONFIG_INVALID')
    expect(e.key).toBe(key)
    expect(e.message).toMatch(pattern)
    expect(e.message).toContain(`${key}:`)
    expect(e.message).not.toContain('\n')
  })

  it('names the option key for an options object', () => {
    expect(failure({ addr: 'h:1', sfMaxTotalBytes: -5 }).key).toBe('sfMaxTotalBytes')
    expect(failure({ addr: 'h:1', bogus: 1 } as never).message).toMatch(/bogus: unknown option/)
  })
})
