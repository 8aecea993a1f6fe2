/**
 * While this process waits for the pipeline's writer lease (another sync holds it), the configured
 * address answers every request 503 + Retry-After, so a client or a load balancer sees at once that
 * this one is not the writer, rather than a refused connection. skipprd closes the standby once it
 * has the lease, before the source takes the address.
 */
import type { ConnectorContext, Standby } from '@skippr/connector-api'
import { notWriter } from './answer.js'
import type { HttpServerConfig } from './config.js'
import { closeListener, openListener, send } from './listener.js'

export async function openStandby(config: HttpServerConfig, context: ConnectorContext): Promise<Standby> {
  const server = await openListener(config, context.configDir, (_request, response) =>
    send(response, notWriter(context.pipeline), true),
  )
  context.logger.info('HttpServer standing by: another sync holds the writer lease', {
    listen: config.listen,
  })
  return { close: () => closeListener(server) }
}
