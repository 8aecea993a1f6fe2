import { silentLogger } from '@skippr/connector-api'
import { type FakeSnowflake, startFakeSnowflake } from '@skippr/test-servers'
import type { SnowflakeSinkOptions } from '../src/config.js'
import { SnowflakeSink } from '../src/sink.js'

export const SCHEMA = 'PUBLIC'

/** The sink's config for `server`, with `extra` over it. */
export function sinkConfig(
  server: FakeSnowflake,
  extra: Partial<SnowflakeSinkOptions> = {},
): SnowflakeSinkOptions {
  return {
    account: server.account,
    username: server.username,
    password: server.password,
    warehouse: server.warehouse,
    database: server.database,
    schema: SCHEMA,
    access_url: server.accessUrl,
    ...extra,
  }
}

export function openSink(server: FakeSnowflake, extra: Partial<SnowflakeSinkOptions> = {}): SnowflakeSink {
  return new SnowflakeSink(sinkConfig(server, extra), silentLogger)
}

export { startFakeSnowflake }
