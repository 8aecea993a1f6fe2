import { z } from 'zod'
import { MAX_BIKEHIRE_ROWS } from './bikehire.js'

export const DEFAULT_SEED = 1
export const DEFAULT_BATCH_ROWS = 10_000

export const sampleConfig = z.strictObject({
  dataset: z.literal('bikehire').describe('The dataset to generate; `bikehire` is the one there is.'),
  rows: z
    .number()
    .int()
    .min(0)
    .max(MAX_BIKEHIRE_ROWS)
    .describe('How many rows the dataset has; the source ends after the last one.'),
  seed: z
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .optional()
    .describe(
      `Chooses the rows; the same seed and rows always give the same data (default ${DEFAULT_SEED}).`,
    ),
  batch_rows: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .describe(`Rows per chunk handed to the runner (default ${DEFAULT_BATCH_ROWS}).`),
})

export type SampleConfig = z.infer<typeof sampleConfig>
