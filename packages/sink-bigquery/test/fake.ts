import { silentLogger } from '@skippr/connector-api'
import { type FakeBigquery, startFakeBigquery } from '@skippr/test-servers'
import type { BigquerySinkOptions } from '../src/config.js'
import { BigquerySink } from '../src/sink.js'

export const DATASET = 'skippr_test'

/** The sink's config for `server`, with `extra` over it. */
export function sinkConfig(
  server: FakeBigquery,
  extra: Partial<BigquerySinkOptions> = {},
): BigquerySinkOptions {
  return {
    project: server.project,
    dataset: DATASET,
    access_token: server.token,
    api_endpoint: server.endpoint,
    ...extra,
  }
}

export function openSink(server: FakeBigquery, extra: Partial<BigquerySinkOptions> = {}): BigquerySink {
  return new BigquerySink(sinkConfig(server, extra), silentLogger)
}

export { startFakeBigquery }
