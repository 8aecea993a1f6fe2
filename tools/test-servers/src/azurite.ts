/** An Azure Blob Storage emulator on 127.0.0.1 for tests: Azurite's blob service, run as a child process. */
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { freePorts } from './ports.js'
import { answersHttp } from './probes.js'
import { startServer } from './server-process.js'

export interface AzuriteServer {
  /** The account's blob service, path-style: `http://127.0.0.1:<port>/devstoreaccount1`. */
  readonly blobEndpoint: string
  readonly accountName: string
  /** Azurite's well-known development key (base64), public in Azure's docs. */
  readonly accountKey: string
  /** `DefaultEndpointsProtocol=http;AccountName=…;AccountKey=…;BlobEndpoint=…;`, for `fromConnectionString`. */
  readonly connectionString: string
  /** Holds `azurite.log`; the blobs live in Azurite's memory. Removed by stop(). */
  readonly dir: string
  stop(): Promise<void>
}

const HOST = '127.0.0.1'
// Azurite's built-in account (EMULATOR_ACCOUNT_NAME/KEY in its source), unless AZURITE_ACCOUNTS overrides it.
const ACCOUNT_NAME = 'devstoreaccount1'
const ACCOUNT_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
const BIN = createRequire(import.meta.url).resolve('azurite/dist/src/blob/main.js')

/** Starts an empty blob service: no containers. */
export async function startAzurite(): Promise<AzuriteServer> {
  const [port] = (await freePorts(1)) as [number]
  const blobEndpoint = `http://${HOST}:${port}/${ACCOUNT_NAME}`
  const { dir, stop } = await startServer('Azurite', async (dir) => ({
    command: process.execPath,
    args: [
      BIN,
      ...['--blobHost', HOST, '--blobPort', String(port)],
      // In memory rather than in `dir`: Azurite refuses --location together with --inMemoryPersistence,
      // and it writes nothing to its working directory without persistence.
      '--inMemoryPersistence',
      // The SDK may speak a newer API version than this Azurite knows.
      '--skipApiVersionCheck',
      // Telemetry would report every test run to Azure Application Insights over the network.
      '--disableTelemetry',
      '--silent',
    ],
    outputFile: join(dir, 'azurite.log'),
    logFiles: [],
    readyTimeoutMs: 30_000,
    // Any answer will do: unsigned requests get 403, which shows that the service takes requests.
    isReady: () => answersHttp(`${blobEndpoint}?comp=list`),
  }))
  return {
    blobEndpoint,
    accountName: ACCOUNT_NAME,
    accountKey: ACCOUNT_KEY,
    connectionString: `DefaultEndpointsProtocol=http;AccountName=${ACCOUNT_NAME};AccountKey=${ACCOUNT_KEY};BlobEndpoint=${blobEndpoint};`,
    dir,
    stop,
  }
}
