import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { BlobServiceClient, type ContainerClient } from '@azure/storage-blob'
import type { ObjectStoreHarness, SinkHarness } from '@skippr/conformance'
import { objectRows } from '@skippr/conformance'
import type { ConnectorContext } from '@skippr/connector-api'
import { silentLogger } from '@skippr/connector-api'
import type { ObjectSinkOptions } from '@skippr/object-sink'
import type { AzuriteServer } from '@skippr/test-servers'
import { startAzurite } from '@skippr/test-servers'
import * as v from 'valibot'
import type { AzureBlobSinkConfig } from '../src/index.js'
import { AzureBlobStore, azureBlobSinkConfig, sink } from '../src/index.js'

/** An Azurite with one container for a test file, started in beforeAll and stopped in afterAll. */
export interface AzureFixture {
  readonly server: () => AzuriteServer
  readonly container: string
  start(): Promise<void>
  stop(): Promise<void>
  /** The sink config for this container, signed with Azurite's connection string, with the fields given. */
  config(fields?: Record<string, unknown>): AzureBlobSinkConfig
  /** The container through the SDK, signed with the account key: what a user's other tools see. */
  containerClient(): ContainerClient
}

export function azureFixture(): AzureFixture {
  let server: AzuriteServer | undefined
  const container = `skippr-${randomBytes(4).toString('hex')}`
  const started = () => {
    if (!server) throw new Error('Azurite is not started: call start() in beforeAll')
    return server
  }
  const containerClient = () =>
    BlobServiceClient.fromConnectionString(started().connectionString).getContainerClient(container)
  return {
    server: started,
    container,
    async start() {
      server = await startAzurite()
      await containerClient().create()
    },
    stop: async () => server?.stop(),
    config: (fields = {}) =>
      v.parse(azureBlobSinkConfig, {
        container,
        connection_string: started().connectionString,
        format: 'jsonl',
        ...fields,
      }),
    containerClient,
  }
}

/** What the runner hands a sink it creates. */
export function contextFor(pipeline: string): ConnectorContext {
  return { configDir: tmpdir(), dataDir: tmpdir(), pipeline, logger: silentLogger }
}

/** The contract suite's stores, on a fixture the test file starts and stops. */
export function storeHarness(fixture: AzureFixture): ObjectStoreHarness {
  return {
    name: 'azure blob (Azurite)',
    createStore: async () => new AzureBlobStore(fixture.config({ prefix: 'contract' })),
  }
}

/** The sink as the runner makes it (`sink.create`), read back the way a downstream user would. */
export function sinkHarness(fixture: AzureFixture, encoding: ObjectSinkOptions['encoding']): SinkHarness {
  const fields = { prefix: `conformance/${encoding.format}-${encoding.compression}`, ...encoding }
  return {
    name: `azure blob (Azurite, ${encoding.format}, ${encoding.compression})`,
    setup: () => fixture.start(),
    createSink: async () => sink.create(fixture.config(fields), contextFor('conformance')),
    readRows: (namespace) => objectRows(new AzureBlobStore(fixture.config(fields)), namespace),
    cleanup: () => fixture.stop(),
  }
}
