import type { SinkDefinition } from '@skippr/connector-api'
import { ObjectSink, objectSinkOptions } from '@skippr/object-sink'
import type { AzureBlobSinkConfig } from './config.js'
import { azureBlobSinkConfig } from './config.js'
import { AzureBlobStore } from './store.js'

export { DEFAULT_RETRY } from './client.js'
export type { AzureBlobSinkConfig, AzureBlobSinkOptions, AzureCredentials } from './config.js'
export { azureBlobSinkConfig } from './config.js'
export {
  AZURE_AUTHENTICATION_FAILED,
  AZURE_CONTAINER_NOT_FOUND,
  AZURE_PERMISSION_DENIED,
  AZURE_REQUEST_REFUSED,
  AZURE_TIMEOUT,
  AZURE_UNAVAILABLE,
  AZURE_UNREACHABLE,
} from './errors.js'
export { BATCH_METADATA, SHA256_METADATA } from './metadata.js'
export type { AzureBlobStoreConfig, AzureBlobTuning } from './store.js'
export { AzureBlobStore, DEFAULT_BLOCK_BYTES, DEFAULT_REQUEST_TIMEOUT_MS } from './store.js'

/** The `AzureBlob` destination: each batch part one blob, created once (`If-None-Match: *`). */
export const sink: SinkDefinition<AzureBlobSinkConfig> = {
  kind: 'sink',
  type: 'AzureBlob',
  guarantee: 'overwrite-on-retry',
  config: azureBlobSinkConfig,
  secretFields: ['connection_string', 'sas_token'],
  create: (config, context) => new ObjectSink(new AzureBlobStore(config), objectSinkOptions(config, context)),
}
