/**
 * The directory on the server the store's keys live under (`path`, with the shared `prefix` below
 * it) and how messages name it: `sftp://user@host:port/<path>`, with curl's `/~/` for a path
 * relative to the login directory, so an absolute and a relative path never look alike.
 */
import { posix } from 'node:path'
import { normalizePrefix } from '@skippr/object-sink'

/** The configured path with the prefix below it, normalized: `/srv/out/raw`, `out/raw`, `.` or `/`. */
export function rootDirectory(path: string, prefix: string): string {
  const joined = posix.join(path, normalizePrefix(prefix))
  return joined === '/' ? joined : joined.replace(/\/+$/, '')
}

/** The remote path of `key` (a `/`-separated key relative to the root). */
export function remotePath(root: string, key: string): string {
  return posix.join(root, key)
}

export interface ServerAddress {
  readonly host: string
  readonly port: number
  readonly username: string
}

/** `sftp://user@host:port/<root>`: what messages show; it never holds a credential. */
export function sftpLocation(server: ServerAddress, root: string): string {
  const host = server.host.includes(':') ? `[${server.host}]` : server.host
  const path = root.startsWith('/') ? root : root === '.' ? '/~' : `/~/${root}`
  return `sftp://${encodeURIComponent(server.username)}@${host}:${server.port}${path === '/' ? '' : path}`
}
