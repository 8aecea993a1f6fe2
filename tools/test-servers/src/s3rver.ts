/** An S3-compatible server on 127.0.0.1 for tests: s3rver (npm), run as a child process. */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { answersHttp } from './probes.js'
import { startServer } from './server-process.js'

export interface S3Server {
  /** For path-style requests, e.g. `http://127.0.0.1:41234` (set `forcePathStyle` in the SDK). */
  readonly endpoint: string
  /** s3rver ignores the region; the SDK needs one. */
  readonly region: string
  /** s3rver's one built-in key pair; signed requests must use it. */
  readonly accessKeyId: string
  readonly secretAccessKey: string
  /** Holds the buckets (under `data/`) and `s3rver.log`; removed by stop(). */
  readonly dir: string
  /** Creates a bucket (unsigned `PUT /<name>`, which s3rver accepts); throws s3rver's answer if it fails. */
  createBucket(name: string): Promise<void>
  stop(): Promise<void>
}

const HOST = '127.0.0.1'
// Hard-coded in s3rver (lib/models/account.js): the only credentials it verifies signatures with.
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
/** s3rver's command line, its PUTs made atomic as S3's are (bin/s3rver-atomic.cjs). */
const MAIN = fileURLToPath(new URL('../bin/s3rver-atomic.cjs', import.meta.url))
/** s3rver's first line, `S3rver listening on 127.0.0.1:<port>`, printed even when silent. */
const LISTENING = /S3rver listening on [^\s:]+:(\d+)/

/**
 * Starts s3rver with an empty data dir and no buckets, on a port it binds itself (0) and names in
 * its first line: a port chosen beforehand could be taken by another test's server in between,
 * which would then answer the readiness probe in its place.
 */
export async function startS3rver(): Promise<S3Server> {
  let endpoint = ''
  const { dir, stop } = await startServer('S3rver', async (dir) => {
    const outputFile = join(dir, 's3rver.log')
    return {
      command: process.execPath,
      args: [MAIN, '--address', HOST, '--port', '0', '--directory', join(dir, 'data'), '--silent'],
      outputFile,
      logFiles: [],
      readyTimeoutMs: 30_000,
      async isReady() {
        const port = LISTENING.exec(await readFile(outputFile, 'utf8'))?.[1]
        if (port === undefined) return false
        endpoint = `http://${HOST}:${port}`
        return answersHttp(endpoint)
      },
    }
  })
  return {
    endpoint,
    region: 'us-east-1',
    ...CREDENTIALS,
    dir,
    async createBucket(name) {
      const response = await fetch(`${endpoint}/${encodeURIComponent(name)}`, {
        method: 'PUT',
        headers: { connection: 'close' },
      })
      const text = await response.text()
      if (!response.ok) {
        throw new Error(`S3rver: creating bucket ${name} failed: ${response.status} ${errorSummary(text)}`)
      }
    },
    stop,
  }
}

/** `Code: Message` of an S3 XML error body, on one line. */
function errorSummary(xml: string): string {
  const field = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1]
  return [field('Code'), field('Message')].filter(Boolean).join(': ') || 'no error body'
}
