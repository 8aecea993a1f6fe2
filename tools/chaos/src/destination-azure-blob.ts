/**
 * Azure Blob as a chaos destination: an Azurite of its own (@skippr/test-servers) with a container
 * for the run, Parquet under a prefix, the connection string given to skipprd through a `${NAME}`
 * reference as the sink's secret fields demand. Azurite honours `If-None-Match: *`, so a retry finds
 * its blob there and the SHA-256 stored with it decides: Parquet must encode a retried batch to the
 * very same bytes, or the retry is a conflict.
 */
import { randomBytes } from 'node:crypto'
import { BlobServiceClient } from '@azure/storage-blob'
import { AzureBlobStore } from '@skippr/sink-azure-blob'
import { startAzurite } from '@skippr/test-servers'
import type { Destination } from './destination.js'
import type { ObjectLayout } from './object-audit.js'
import { type ObjectServer, objectDestination } from './object-destination.js'

/** The variable skipprd reads the connection string from (the entry's `${NAME}` reference). */
export const AZURE_CONNECTION_VARIABLE = 'SKIPPR_CHAOS_AZURE_CONNECTION_STRING'

/** Starts Azurite with a container of the run; `pipeline` names the keys the audit expects. */
export async function azureBlobDestination(workDir: string, pipeline: string): Promise<Destination> {
  const server = await startAzurite()
  const container = `skippr-chaos-${randomBytes(4).toString('hex')}`
  try {
    await BlobServiceClient.fromConnectionString(server.connectionString)
      .getContainerClient(container)
      .create()
  } catch (error) {
    await server.stop()
    throw error
  }
  const layout: ObjectLayout = {
    prefix: 'chaos',
    namespace: 'rentals',
    pipeline,
    extension: 'parquet',
    manifest: false,
  }
  const storeAt = (prefix: string) =>
    new AzureBlobStore({ container, prefix, connection_string: server.connectionString })
  const objects: ObjectServer = {
    label: `Azure Blob container ${container} at ${server.blobEndpoint} (Azurite), prefix ${layout.prefix}, Parquet`,
    sink: {
      AzureBlob: {
        container,
        prefix: layout.prefix,
        connection_string: `\${${AZURE_CONNECTION_VARIABLE}}`,
        format: 'parquet',
      },
    },
    env: { [AZURE_CONNECTION_VARIABLE]: server.connectionString },
    layout,
    // The container from its top: a blob outside the prefix is a stray too. Only committed blobs
    // are listed; the sink stages blocks only for objects above 8 MiB, far above these.
    allKeys: () => storeAt('').list(''),
    reader: () => storeAt(layout.prefix),
    stop: () => server.stop(),
  }
  return objectDestination(workDir, objects)
}
