import type { SinkDefinition } from '@skippr/connector-api'
import type { StdoutConfig } from './config.js'
import { stdoutConfig } from './config.js'
import { StdoutSink } from './sink.js'

export const sink: SinkDefinition<StdoutConfig> = {
  kind: 'sink',
  type: 'Stdout',
  guarantee: 'none',
  config: stdoutConfig,
  secretFields: [],
  create: (config) => new StdoutSink(config),
}

export type { StdoutConfig } from './config.js'
export { stdoutConfig } from './config.js'
export {
  STDOUT_CLOSED,
  STDOUT_WRITE_FAILED,
  StdoutClosedError,
  StdoutWriteError,
} from './errors.js'
export type { Output } from './sink.js'
export { StdoutSink } from './sink.js'
