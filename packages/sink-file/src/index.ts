import type { SinkDefinition } from '@skippr/connector-api'
import type { FileConfig } from './config.js'
import { fileConfig } from './config.js'
import { FileSink } from './sink.js'

export const sink: SinkDefinition<FileConfig> = {
  kind: 'sink',
  type: 'File',
  guarantee: 'overwrite-on-retry',
  config: fileConfig,
  secretFields: [],
  create: (config, context) => new FileSink(config, context),
}

export type { FileConfig } from './config.js'
export { fileConfig } from './config.js'
export {
  FILE_NOT_WRITABLE,
  FILE_WRITE_FAILED,
  FileNotWritableError,
  FileWriteError,
} from './errors.js'
export { batchFile, namespaceDir } from './names.js'
export { FileSink } from './sink.js'
