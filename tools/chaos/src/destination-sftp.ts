/**
 * SFTP as a chaos destination: an OpenSSH sshd of its own (@skippr/test-servers), gzip'd CSV with a
 * manifest per batch below a directory on it, the private key given to skipprd through a `${NAME}`
 * reference as the sink's secret fields demand and the host key pinned by its fingerprint. A file
 * is written under a temporary name and renamed without overwriting, so a kill mid-write leaves a
 * temporary file: the next run must remove it, and the audit looks at the directory itself, where
 * temporary files show, rather than at the store's listing, which hides them.
 */
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { hostKeyFingerprint, rootDirectory, SftpStore } from '@skippr/sink-sftp'
import { type SshServer, startSshd } from '@skippr/test-servers'
import type { Destination } from './destination.js'
import type { ObjectLayout } from './object-audit.js'
import { type ObjectServer, objectDestination } from './object-destination.js'

/** The variable skipprd reads the private key from (the entry's `${NAME}` reference). */
export const SFTP_KEY_VARIABLE = 'SKIPPR_CHAOS_SFTP_PRIVATE_KEY'

/** Starts sshd; `pipeline` names the keys the audit expects. */
export async function sftpDestination(workDir: string, pipeline: string): Promise<Destination> {
  const server = await startSshd()
  const layout: ObjectLayout = {
    prefix: 'chaos',
    namespace: 'rentals',
    pipeline,
    extension: 'csv.gz',
    manifest: true,
  }
  const hostKey = fingerprint(server)
  const objects: ObjectServer = {
    label: `SFTP directory ${server.sftpRoot} on ${server.host}:${server.port} (sshd), prefix ${layout.prefix}, gzip'd CSV with manifests`,
    sink: {
      Sftp: {
        host: server.host,
        port: server.port,
        username: server.username,
        private_key: `\${${SFTP_KEY_VARIABLE}}`,
        host_key: hostKey,
        path: server.sftpRoot,
        prefix: layout.prefix,
        format: 'csv',
        compression: 'gzip',
        manifest: true,
      },
    },
    env: { [SFTP_KEY_VARIABLE]: server.privateKey },
    layout,
    allKeys: () => filesBelow(server.sftpRoot),
    reader: () =>
      new SftpStore({
        host: server.host,
        port: server.port,
        username: server.username,
        privateKey: server.privateKey,
        hostKey,
        root: rootDirectory(server.sftpRoot, layout.prefix),
      }),
    stop: () => server.stop(),
  }
  return objectDestination(workDir, objects)
}

/** `SHA256:…` of the server's public key (`ssh-ed25519 AAAA… comment`), as `ssh-keygen -lf` prints it. */
function fingerprint(server: SshServer): string {
  const [, base64] = server.hostPublicKey.split(' ')
  return hostKeyFingerprint(Buffer.from(base64 ?? '', 'base64'))
}

/** Every file below `dir` as a `/`-separated key, dot files too: the sshd serves this machine's own disk. */
async function filesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((entry) => !entry.isDirectory())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort()
}
