import { RECORD_FORMATS } from '@skippr/connector-api'
import { z } from 'zod'

export const stdoutConfig = z.strictObject({
  format: z
    .enum(RECORD_FORMATS)
    .optional()
    .describe('Print rows as jsonl or csv (a header row per part); by default each part as it arrives'),
})

export type StdoutConfig = z.infer<typeof stdoutConfig>
