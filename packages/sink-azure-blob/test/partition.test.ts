/** `partition_by` on Azure Blob: the shared suite against Azurite, where blobs are created once. */
import { partitionSuite } from '@skippr/conformance'
import { AzureBlobStore, sink } from '../src/index.js'
import { azureFixture, contextFor } from './helpers.js'

const fixture = azureFixture()
partitionSuite({
  name: 'azure blob (Azurite)',
  setup: () => fixture.start(),
  sinkAt: async (prefix, fields) => ({
    sink: await sink.create(fixture.config({ prefix, ...fields }), contextFor('orders-sync')),
    store: new AzureBlobStore(fixture.config({ prefix })),
  }),
  cleanup: () => fixture.stop(),
})
