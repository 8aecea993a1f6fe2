/**
 * AWS's DynamoDB Local for tests: the jar inside the npm package `amplify-dynamodb-simulator`, run
 * in memory as a child process (`java` on PATH).
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { freePorts } from './ports.js'
import { answersHttp } from './probes.js'
import { startServer } from './server-process.js'

export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>`. */
  readonly endpoint: string
  readonly port: number
  /** Its working directory; holds `dynamodb-local.log`. Removed by stop(). */
  readonly dir: string
  stop(): Promise<void>
}

const HOST = '127.0.0.1'
const EMULATOR = join(
  dirname(createRequire(import.meta.url).resolve('amplify-dynamodb-simulator/package.json')),
  'emulator',
)
// A test server holds a handful of items: a small heap, and a JIT tuned for start-up over throughput.
const JVM_OPTIONS = ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1']

/** Starts an empty DynamoDB Local (no tables) that keeps everything in memory. */
export async function startDynamoDbLocal(): Promise<DynamoDbLocal> {
  const [port] = (await freePorts(1)) as [number]
  const endpoint = `http://${HOST}:${port}`
  const { dir, stop } = await startServer('DynamoDB-Local', async (dir) => ({
    // `env` sets what the server needs and then execs java, so java is the process group's leader.
    command: 'env',
    args: [
      // Whatever it writes to its working directory (dynamodb-local-metadata.json, with telemetry
      // on) stays in dir.
      ...['-C', dir],
      // 1.25 parses -disableTelemetry but does not consult it: only this variable stops the events it
      // would send to AWS.
      'DDB_LOCAL_TELEMETRY=0',
      'java',
      ...JVM_OPTIONS,
      `-Djava.library.path=${join(EMULATOR, 'DynamoDBLocal_lib')}`,
      ...['-jar', join(EMULATOR, 'DynamoDBLocal.jar')],
      ...['-inMemory', '-disableTelemetry', '-port', String(port)],
    ],
    outputFile: join(dir, 'dynamodb-local.log'),
    logFiles: [],
    readyTimeoutMs: 30_000,
    // Any answer will do: an unsigned request gets 400 MissingAuthenticationToken from DynamoDB's handler.
    isReady: () => answersHttp(endpoint),
  }))
  return { endpoint, port, dir, stop }
}
