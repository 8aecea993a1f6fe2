import type { SourceDefinition } from '@skippr/connector-api'
import { type HttpServerConfig, httpServerConfig } from './config.js'
import { HttpServerSource } from './server.js'
import { openStandby } from './standby.js'

export type { HttpServerConfig } from './config.js'
export { httpServerConfig } from './config.js'
export { HttpServerSource } from './server.js'

/** The `HttpServer` source type of skippr.yml: `HttpServer: { listen: 127.0.0.1:8080, format: jsonl }`. */
export const source: SourceDefinition<HttpServerConfig> = {
  kind: 'source',
  type: 'HttpServer',
  config: httpServerConfig,
  secretFields: ['token'],
  create: (config, context) => new HttpServerSource(config, context),
  standby: openStandby,
}
