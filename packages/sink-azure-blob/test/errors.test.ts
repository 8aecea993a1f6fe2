/**
 * What a user sees when something is wrong: a bad config, a missing container, a wrong key, a SAS
 * without the permissions the sink needs, a host that does not answer. Each is one line naming
 * the place (never a secret), and classified: permanent, or retried.
 */
import { createServer, type Server, type Socket } from 'node:net'
import {
  ContainerSASPermissions,
  generateBlobSASQueryParameters,
  RestError,
  StorageSharedKeyCredential,
} from '@azure/storage-blob'
import { allTypesSchema } from '@skippr/conformance'
import { isPermanent, parseConnectorConfig } from '@skippr/connector-api'
import { freePorts } from '@skippr/test-servers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { classify } from '../src/errors.js'
import type { AzureBlobTuning } from '../src/index.js'
import {
  AZURE_AUTHENTICATION_FAILED,
  AZURE_CONTAINER_NOT_FOUND,
  AZURE_PERMISSION_DENIED,
  AZURE_REQUEST_REFUSED,
  AZURE_TIMEOUT,
  AZURE_UNAVAILABLE,
  AZURE_UNREACHABLE,
  AzureBlobStore,
  sink,
} from '../src/index.js'
import { azureFixture, contextFor } from './helpers.js'

const fixture = azureFixture()
beforeAll(() => fixture.start())
afterAll(() => fixture.stop())

const AT = { file: 'skippr.yml', path: 'data_sinks.lake.AzureBlob' }
const WRONG_KEY = Buffer.from('not the key of this account, not the key of this account!').toString('base64')

/** The store on a config with `fields`, and the error its `open` fails with. */
async function openFailure(fields: Record<string, unknown>, tuning: AzureBlobTuning = {}) {
  const store = new AzureBlobStore(fixture.config(fields), tuning)
  try {
    await store.open()
  } catch (error) {
    return { store, error: error as Error & { code?: string } }
  }
  throw new Error('open succeeded')
}

function expectOneLineWithout(message: string, secrets: readonly string[]): void {
  expect(message).not.toContain('\n')
  for (const secret of secrets) expect(message).not.toContain(secret)
}

/** A SAS token for the fixture's container with only `permissions`, as a user would paste it. */
function containerSas(permissions: string): string {
  const { accountName, accountKey } = fixture.server()
  return generateBlobSASQueryParameters(
    {
      containerName: fixture.container,
      permissions: ContainerSASPermissions.parse(permissions),
      expiresOn: new Date(Date.now() + 3_600_000),
    },
    new StorageSharedKeyCredential(accountName, accountKey),
  ).toString()
}

function sasFields(permissions: string) {
  const sas = containerSas(permissions)
  return {
    sas,
    fields: { connection_string: undefined, account_url: fixture.server().blobEndpoint, sas_token: sas },
  }
}

describe('AzureBlob config', () => {
  const valid = { container: 'lake', format: 'jsonl' }
  const problem = (raw: Record<string, unknown>) => {
    try {
      parseConnectorConfig(sink, raw, AT)
    } catch (error) {
      return (error as Error).message
    }
    throw new Error('the config was accepted')
  }

  it.each([
    [
      { ...valid },
      'data_sinks.lake.AzureBlob.connection_string: missing: give connection_string, or account_url with sas_token',
    ],
    [
      {
        ...valid,
        connection_string: 'UseDevelopmentStorage=true',
        account_url: 'https://a.blob.core.windows.net',
      },
      'data_sinks.lake.AzureBlob.connection_string: give either connection_string, or account_url with sas_token, not both',
    ],
    [
      { ...valid, account_url: 'https://a.blob.core.windows.net' },
      'data_sinks.lake.AzureBlob.sas_token: missing: account_url needs a sas_token',
    ],
    [
      { ...valid, sas_token: 'sv=2024&sig=c2VjcmV0' },
      'data_sinks.lake.AzureBlob.account_url: missing: sas_token needs the account_url',
    ],
    [
      {
        ...valid,
        account_url: 'https://a.blob.core.windows.net/?sv=2024&sig=c2VjcmV0',
        sas_token: 'sv=2024&sig=c2VjcmV0',
      },
      'data_sinks.lake.AzureBlob.account_url: the account_url holds a query or a user: give the SAS as sas_token instead',
    ],
    [
      { ...valid, account_url: 'https://a.blob.core.windows.net', sas_token: 'sv=2024&sp=r' },
      'data_sinks.lake.AzureBlob.sas_token: not a SAS token: it holds no sig=',
    ],
    [
      { ...valid, connection_string: 'AccountName=a;Password=c2VjcmV0' },
      'data_sinks.lake.AzureBlob.connection_string: not an Azure Storage connection string',
    ],
    [
      { ...valid, container: 'My_Container', connection_string: 'UseDevelopmentStorage=true' },
      'data_sinks.lake.AzureBlob.container: not a container name: Azure allows 3 to 63 lowercase letters',
    ],
  ])('%o is refused in one line: %s', (raw, expected) => {
    const message = problem(raw)
    expect(message).toContain(`skippr.yml: ${expected}`)
    expectOneLineWithout(message, ['c2VjcmV0'])
  })

  it('accepts each way of signing in, and marks its credentials secret', () => {
    expect(sink.secretFields).toEqual(['connection_string', 'sas_token'])
    const byUrl = parseConnectorConfig(
      sink,
      { ...valid, account_url: 'https://a.blob.core.windows.net', sas_token: '?sv=2024&sig=c2VjcmV0' },
      AT,
    )
    expect(byUrl).toMatchObject({ prefix: '', compression: 'none', manifest: false })
    expect(new AzureBlobStore(byUrl).location).toBe('azure://a/lake')
    const byString = parseConnectorConfig(
      sink,
      { ...valid, connection_string: 'UseDevelopmentStorage=true' },
      AT,
    )
    expect(new AzureBlobStore(byString).location).toBe('azure://devstoreaccount1/lake')
  })
})

describe('AzureBlob failures against Azurite', () => {
  it('a missing container is permanent: create it or fix container', async () => {
    const { store, error } = await openFailure({ container: 'no-such-container', prefix: 'raw' })
    expect(isPermanent(error)).toBe(true)
    expect(error.code).toBe(AZURE_CONTAINER_NOT_FOUND)
    expect(error.message).toBe(
      `${store.location}: the container no-such-container does not exist: create container no-such-container or fix container`,
    )
    expect(store.location).toBe('azure://devstoreaccount1/no-such-container/raw')
    // The sink's prepare throws it as it is, so the runner stops the pipeline at once.
    const created = await sink.create(fixture.config({ container: 'no-such-container' }), contextFor('p'))
    await expect(created.prepare(allTypesSchema('orders'))).rejects.toMatchObject({
      code: AZURE_CONTAINER_NOT_FOUND,
    })
  })

  it('a wrong account key is permanent, and the message holds neither key', async () => {
    const { accountKey, connectionString } = fixture.server()
    const { error } = await openFailure({
      connection_string: connectionString.replace(accountKey, WRONG_KEY),
    })
    expect(isPermanent(error)).toBe(true)
    expect(error.code).toBe(AZURE_AUTHENTICATION_FAILED)
    // Azure answers AuthenticationFailed; Azurite AuthorizationFailure.
    expect(error.message).toMatch(
      new RegExp(
        `^azure://devstoreaccount1/${fixture.container}: Azure refused the credentials \\(403 Authori[sz]ationFailure: `,
      ),
    )
    expect(error.message).toContain('check the account key in connection_string, or sas_token')
    expectOneLineWithout(error.message, [accountKey, WRONG_KEY])
  })

  it('a read-only SAS is permanent at open, before any batch, and the message holds no part of the token', async () => {
    const { sas, fields } = sasFields('r')
    const { error } = await openFailure(fields)
    expect(isPermanent(error)).toBe(true)
    expect(error.code).toBe(AZURE_PERMISSION_DENIED)
    expect(error.message).toContain('403 AuthorizationPermissionMismatch')
    expect(error.message).toContain(
      `read, create and write permission on container ${fixture.container}: a SAS with sp=rcw`,
    )
    const signature = new URLSearchParams(sas).get('sig') as string
    expectOneLineWithout(error.message, [sas, signature, encodeURIComponent(signature)])
  })

  it('a SAS that may write but not read is permanent at open too: a retry must read its own blobs', async () => {
    const { error } = await openFailure(sasFields('cw').fields)
    expect(isPermanent(error)).toBe(true)
    expect(error.code).toBe(AZURE_PERMISSION_DENIED)
  })

  it('a SAS with read, create and write lands a batch', async () => {
    const { fields } = sasFields('rcw')
    const store = new AzureBlobStore(fixture.config({ ...fields, prefix: 'by-sas' }))
    expect(store.location).toBe(`azure://devstoreaccount1/${fixture.container}/by-sas`)
    await store.open()
    const body = [new TextEncoder().encode('{"a":1}\n')]
    const info = { sha256: 'x'.repeat(64), contentType: 'application/x-ndjson', batch: 'p/e/000000000001/0' }
    expect(await store.create('k.jsonl', body, info)).toBe('created')
    expect(await store.create('k.jsonl', body, info)).toBe('exists')
  })

  it('an unreachable host is retried, within seconds with the default retries, naming the location', async () => {
    const [port] = (await freePorts(1)) as [number]
    const { connectionString } = fixture.server()
    const unreachable = connectionString.replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${port}`)
    const started = Date.now()
    const { error } = await openFailure({ connection_string: unreachable, prefix: 'raw' })
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(isPermanent(error)).toBe(false)
    expect(error.code).toBe(AZURE_UNREACHABLE)
    expect(error.message).toBe(
      `azure://devstoreaccount1/${fixture.container}/raw: cannot reach Azure Blob Storage (connect ECONNREFUSED 127.0.0.1:${port}); retried`,
    )
    expectOneLineWithout(error.message, [fixture.server().accountKey])
  })

  it('a host that accepts the connection and never answers times out, and is retried', async () => {
    const sockets = new Set<Socket>()
    const silent: Server = createServer((socket) => sockets.add(socket))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = silent.address() as { port: number }
      const { connectionString } = fixture.server()
      const hanging = connectionString.replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${port}`)
      const started = Date.now()
      const { error } = await openFailure({ connection_string: hanging }, { requestTimeoutMs: 500 })
      expect(Date.now() - started).toBeLessThan(5_000)
      expect(isPermanent(error)).toBe(false)
      expect(error.code).toBe(AZURE_TIMEOUT)
      expect(error.message).toMatch(/: Azure Blob Storage did not answer in time \(.+\); retried$/)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => silent.close(resolve))
    }
  })
})

describe('classification of answers Azurite never gives', () => {
  const target = { where: 'azure://acct/lake/raw/k', container: 'lake' }
  it.each([
    [503, 'ServerBusy', AZURE_UNAVAILABLE, false],
    [500, 'InternalError', AZURE_UNAVAILABLE, false],
    [429, 'TooManyRequests', AZURE_UNAVAILABLE, false],
    [409, 'LeaseAlreadyPresent', AZURE_UNAVAILABLE, false],
    [408, 'RequestTimeout', AZURE_TIMEOUT, false],
    [403, 'AuthenticationFailed', AZURE_AUTHENTICATION_FAILED, true],
    [403, 'AuthorizationSourceIPMismatch', AZURE_PERMISSION_DENIED, true],
    [400, 'InvalidHeaderValue', AZURE_REQUEST_REFUSED, true],
  ])('%i %s is %s, permanent: %s', (statusCode, code, expected, permanent) => {
    const error = classify(
      new RestError(`${code} happened.\nRequestId:1\nTime:now`, { statusCode, code }),
      target,
    )
    expect(error).toMatchObject({ code: expected })
    expect(isPermanent(error)).toBe(permanent)
    expect(error.message).toMatch(
      new RegExp(`^azure://acct/lake/raw/k: .*\\(${statusCode} ${code}: ${code} happened\\.\\)`),
    )
    expect(error.message).not.toContain('\n')
  })

  it('a service message quoting a signature keeps it out', () => {
    const quoted = new RestError('Signature did not match: sv=2024&sig=c2VjcmV0&sp=r', {
      statusCode: 403,
      code: 'AuthenticationFailed',
    })
    expect(classify(quoted, target).message).toContain('sig=***&sp=r')
    expect(classify(quoted, target).message).not.toContain('c2VjcmV0')
  })
})
