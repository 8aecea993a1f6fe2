import type { SourceDefinition } from '@skippr/connector-api'
import { type WebsocketConfig, websocketConfig } from './config.js'
import { WebsocketSource } from './source.js'

export type { WebsocketConfig } from './config.js'
export { websocketConfig } from './config.js'
export type { SenderEntry, SenderPositions } from './offset.js'
export { WebsocketSource } from './source.js'

/**
 * The `Websocket` source type of skippr.yml: `Websocket: { listen: 0.0.0.0:9000, namespace: events }`.
 * An application sends with `@skippr/sf`'s `Sender` to `ws::addr=<listen>;…`.
 */
export const source: SourceDefinition<WebsocketConfig> = {
  kind: 'source',
  type: 'Websocket',
  config: websocketConfig,
  secretFields: ['token'],
  create: (config, context) => new WebsocketSource(config, context),
}
