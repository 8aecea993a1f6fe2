/** The test's OpenSSH sshd, and stores and sinks on it, each on a directory of its own. */

import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { ConnectorContext, Sink } from '@skippr/connector-api'
import { parseConnectorConfig, silentLogger } from '@skippr/connector-api'
import { type SshServer, startSshd } from '@skippr/test-servers'
import type { SftpSinkOptions, SftpStoreOptions } from '../src/index.js'
import { rootDirectory, SftpStore, sink } from '../src/index.js'

const execFileAsync = promisify(execFile)

export type { SshServer }
export { startSshd }

/** A directory name no other case uses, relative to the server's sftpRoot. */
export function freshDir(label: string): string {
  return `${label}-${randomBytes(4).toString('hex')}`
}

/** The config fields of a key login to the server, below `sftpRoot/<dir>`. */
export function loginConfig(server: SshServer, dir: string): SftpSinkOptions {
  return {
    host: server.host,
    port: server.port,
    username: server.username,
    private_key: server.privateKey,
    path: join(server.sftpRoot, dir),
    format: 'jsonl',
  }
}

/** A store on `sftpRoot/<dir>` (and `prefix` below it). */
export function storeOn(server: SshServer, dir: string, options: Partial<SftpStoreOptions> = {}): SftpStore {
  return new SftpStore({
    host: server.host,
    port: server.port,
    username: server.username,
    privateKey: server.privateKey,
    root: rootDirectory(join(server.sftpRoot, dir), ''),
    ...options,
  })
}

/** A sink made as the runner makes it: the config parsed by the definition's schema. */
export async function sinkFrom(raw: SftpSinkOptions, pipeline = 'test'): Promise<Sink> {
  const config = parseConnectorConfig(sink, raw, { file: 'skippr.yml', path: 'data_sinks.out.Sftp' })
  const context: ConnectorContext = { configDir: '.', dataDir: '.', pipeline, logger: silentLogger }
  return sink.create(config, context)
}

/** The server's host key fingerprint as a user gets it: `ssh-keygen -lf` on its public key. */
export async function serverFingerprint(server: SshServer): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'skippr-sftp-key-'))
  try {
    await writeFile(join(dir, 'host.pub'), `${server.hostPublicKey}\n`)
    const { stdout } = await execFileAsync('ssh-keygen', ['-lf', join(dir, 'host.pub')], { timeout: 10_000 })
    return stdout.split(' ')[1]!
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
