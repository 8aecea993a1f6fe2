import { crossFieldCheck } from '@skippr/connector-api'
import { objectSinkFields } from '@skippr/object-sink'
import * as v from 'valibot'
import { rootDirectory } from './remote-root.js'
import type { SftpStoreOptions } from './store.js'

/** A host key fingerprint as `ssh-keygen -lf` prints it: `SHA256:` and 43 base64 characters. */
const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}$/

export const sftpSinkConfig = v.pipe(
  v.strictObject({
    host: v.pipe(v.string(), v.minLength(1), v.description('The SFTP server, a host name or IP address')),
    port: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65_535), v.description('The SSH port')),
      22,
    ),
    username: v.pipe(v.string(), v.minLength(1), v.description('The user to log in as')),
    password: v.optional(v.pipe(v.string(), v.minLength(1), v.description("The user's password (secret)"))),
    private_key: v.optional(
      v.pipe(
        v.string(),
        v.minLength(1),
        v.description(
          'The private key text, OpenSSH or PEM format, for key login instead of a password (secret)',
        ),
      ),
    ),
    passphrase: v.optional(
      v.pipe(
        v.string(),
        v.minLength(1),
        v.description('The passphrase of an encrypted private_key (secret)'),
      ),
    ),
    path: v.pipe(
      v.string(),
      v.minLength(1),
      v.check(
        (path) => !path.startsWith('~'),
        'the path is absolute (/srv/data) or relative to the login directory (data, not ~/data)',
      ),
      v.description(
        'The remote directory the objects go under: absolute, or relative to the login directory',
      ),
    ),
    host_key: v.optional(
      v.pipe(
        v.string(),
        v.regex(FINGERPRINT, 'expected a fingerprint as ssh-keygen -lf prints it: SHA256: and 43 characters'),
        v.description(
          "The server's host key fingerprint (SHA256:…, as ssh-keygen -lf prints it); a server with another key is refused",
        ),
      ),
    ),
    ...objectSinkFields,
  }),
  crossFieldCheck((config) => {
    if ((config.password === undefined) === (config.private_key === undefined))
      return [
        {
          path: [config.password === undefined ? 'password' : 'private_key'],
          message: 'give exactly one of password and private_key',
        },
      ]
    if (config.passphrase !== undefined && config.private_key === undefined)
      return [
        {
          path: ['passphrase'],
          message: 'a passphrase belongs to a private_key: give the key too, or remove it',
        },
      ]
    return []
  }),
)

export type SftpSinkConfig = v.InferOutput<typeof sftpSinkConfig>
/** The config as written, before defaults. */
export type SftpSinkOptions = v.InferInput<typeof sftpSinkConfig>

/** The fields that hold credentials. */
export const SECRET_FIELDS = ['password', 'private_key', 'passphrase'] as const

/** What a store on the configured server and directory needs. */
export function sftpStoreOptions(config: SftpSinkConfig): SftpStoreOptions {
  return {
    host: config.host,
    port: config.port,
    username: config.username,
    password: config.password,
    privateKey: config.private_key,
    passphrase: config.passphrase,
    hostKey: config.host_key,
    root: rootDirectory(config.path, config.prefix),
  }
}
