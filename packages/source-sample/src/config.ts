import * as v from 'valibot'
import { MAX_BIKEHIRE_ROWS } from './bikehire.js'

export const DEFAULT_SEED = 1
export const DEFAULT_BATCH_ROWS = 10_000

export const sampleConfig = v.strictObject({
  dataset: v.pipe(
    v.literal('bikehire'),
    v.description('The dataset to generate; `bikehire` is the one there is.'),
  ),
  rows: v.pipe(
    v.number(),
    v.integer(),
    v.minValue(0),
    v.maxValue(MAX_BIKEHIRE_ROWS),
    v.description('How many rows the dataset has; the source ends after the last one.'),
  ),
  seed: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(0),
      v.maxValue(Number.MAX_SAFE_INTEGER),
      v.description(
        `Chooses the rows; the same seed and rows always give the same data (default ${DEFAULT_SEED}).`,
      ),
    ),
  ),
  batch_rows: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(1_000_000),
      v.description(`Rows per chunk handed to the runner (default ${DEFAULT_BATCH_ROWS}).`),
    ),
  ),
})

export type SampleConfig = v.InferOutput<typeof sampleConfig>
