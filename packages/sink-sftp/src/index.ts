import type { SinkDefinition } from '@skippr/connector-api'
import { ObjectSink, objectSinkOptions } from '@skippr/object-sink'
import type { SftpSinkConfig } from './config.js'
import { SECRET_FIELDS, sftpSinkConfig, sftpStoreOptions } from './config.js'
import { SftpStore } from './store.js'

export type { SftpSinkConfig, SftpSinkOptions } from './config.js'
export { SECRET_FIELDS, sftpSinkConfig, sftpStoreOptions } from './config.js'
export type { SftpLogin } from './connection.js'
export { hostKeyFingerprint } from './connection.js'
export type { LoginMethod } from './errors.js'
export {
  AUTHENTICATION_FAILED,
  AuthenticationError,
  HOST_KEY_MISMATCH,
  HostKeyMismatchError,
  KEY_UNUSABLE,
  KeyUnusableError,
  NOT_A_DIRECTORY,
  NotADirectoryError,
  PERMISSION_DENIED,
  PermissionDeniedError,
  REQUEST_FAILED,
  RequestFailedError,
  UNAVAILABLE,
  UnavailableError,
} from './errors.js'
export { rootDirectory, sftpLocation } from './remote-root.js'
export type { SftpStoreOptions } from './store.js'
export { SftpStore } from './store.js'

/** The `Sftp` destination: each batch part one file below `path`, created once. */
export const sink: SinkDefinition<SftpSinkConfig> = {
  kind: 'sink',
  type: 'Sftp',
  guarantee: 'overwrite-on-retry',
  config: sftpSinkConfig,
  secretFields: SECRET_FIELDS,
  create: (config, context) =>
    new ObjectSink(
      new SftpStore(sftpStoreOptions(config), context.logger),
      objectSinkOptions(config, context),
    ),
}
