import type { SourceDefinition } from '@skippr/connector-api'
import { type SampleConfig, sampleConfig } from './config.js'
import { SampleSource } from './source.js'

export type { BikehireFormat, Rental } from './bikehire.js'
export {
  BIKEHIRE_CSV_HEADER,
  BIKEHIRE_NAMESPACE,
  BikehireEncoder,
  bikehireRows,
  bikehireSchema,
  MAX_BIKEHIRE_ROWS,
} from './bikehire.js'
export type { SampleConfig } from './config.js'
export { sampleConfig } from './config.js'
export { SAMPLE_OFFSET_INVALID, SampleOffsetError } from './errors.js'
export type { BikehireFileOptions } from './file.js'
export { writeBikehireFile } from './file.js'
/** The counter-based hash the rows are drawn from, for tools that derive more data per row. */
export { mix32 } from './random.js'
export type { SampleOffset } from './source.js'
export { SampleSource } from './source.js'

/** The `Sample` source type of skippr.yml: `Sample: { dataset: bikehire, rows: 48213 }`. */
export const source: SourceDefinition<SampleConfig> = {
  kind: 'source',
  type: 'Sample',
  config: sampleConfig,
  secretFields: [],
  create: (config) => new SampleSource(config),
}
