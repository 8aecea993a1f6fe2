/**
 * A connector opened for one look (doctor's `check`, verify's counts) and closed again, whatever
 * the look did.
 */
import type { ConnectorContext } from '@skippr/connector-api'
import type { Logger } from 'pino'
import type { PipelineSettings } from '../config/settings.js'
import { connectorLogger } from '../logging.js'

/** A resolved source or sink (connectors.ts): what creates it, and its validated config. */
interface Creatable<C> {
  readonly definition: { create(config: unknown, context: ConnectorContext): C | Promise<C> }
  readonly config: unknown
}

export function connectorContext(
  configDir: string,
  settings: PipelineSettings,
  logger: Logger,
): ConnectorContext {
  return {
    configDir,
    dataDir: settings.dataDir,
    pipeline: settings.name,
    logger: connectorLogger(logger.child({ pipeline: settings.name })),
  }
}

export async function withConnector<C extends { close(): Promise<void> }, T>(
  resolved: Creatable<C>,
  context: ConnectorContext,
  work: (connector: C) => Promise<T>,
): Promise<T> {
  const connector = await resolved.definition.create(resolved.config, context)
  try {
    return await work(connector)
  } finally {
    await connector.close()
  }
}
