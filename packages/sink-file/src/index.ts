import type { ConnectorContext, SinkDefinition } from '@skippr/connector-api'
import { ObjectSink, objectSinkOptions } from '@skippr/object-sink'
import type { FileConfig } from './config.js'
import { fileConfig, fileRoot } from './config.js'
import { LocalStore } from './local-store.js'

/** The File sink: the object sink over a local directory, each batch part one file, created once. */
export function createFileSink(
  config: FileConfig,
  context: Pick<ConnectorContext, 'configDir' | 'pipeline'>,
): ObjectSink {
  return new ObjectSink(
    new LocalStore(fileRoot(config, context.configDir)),
    objectSinkOptions(config, context),
  )
}

export const sink: SinkDefinition<FileConfig> = {
  kind: 'sink',
  type: 'File',
  guarantee: 'overwrite-on-retry',
  config: fileConfig,
  secretFields: [],
  create: createFileSink,
}

export type { FileConfig } from './config.js'
export { fileConfig, fileRoot } from './config.js'
export {
  FILE_NOT_WRITABLE,
  FILE_WRITE_FAILED,
  FileNotWritableError,
  FileWriteError,
} from './errors.js'
export { LocalStore } from './local-store.js'
