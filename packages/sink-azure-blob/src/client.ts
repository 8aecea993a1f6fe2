/**
 * The SDK client of the sink's container, signed with the config's credentials, and the name of
 * its account for messages. The SDK's own retries are kept short: the runner retries a failed batch
 * itself, with its own backoff, so the SDK only has to smooth over a dropped connection or a brief
 * 503, and a failure is reported within seconds rather than minutes.
 */
import type { ContainerClient, StorageRetryOptions } from '@azure/storage-blob'
import { AnonymousCredential, BlobServiceClient } from '@azure/storage-blob'
import type { AzureCredentials } from './config.js'

/** Three tries: the second at once, the third 1 s later (the SDK's default is four, with 16 s of waiting). */
export const DEFAULT_RETRY: StorageRetryOptions = {
  maxTries: 3,
  retryDelayInMs: 1_000,
  maxRetryDelayInMs: 8_000,
}

export interface Container {
  readonly client: ContainerClient
  /** From the endpoint URL (or the connection string's AccountName); the host for a custom domain. */
  readonly account: string
}

export function connectContainer(
  credentials: AzureCredentials,
  container: string,
  retry: StorageRetryOptions = DEFAULT_RETRY,
): Container {
  const options = { retryOptions: retry }
  const service =
    'connectionString' in credentials
      ? BlobServiceClient.fromConnectionString(credentials.connectionString, options)
      : new BlobServiceClient(
          withSas(credentials.accountUrl, credentials.sasToken),
          new AnonymousCredential(),
          options,
        )
  return {
    client: service.getContainerClient(container),
    account: service.accountName || new URL(service.url).host,
  }
}

function withSas(accountUrl: string, sasToken: string): string {
  const url = new URL(accountUrl)
  url.search = sasToken
  return url.toString()
}
