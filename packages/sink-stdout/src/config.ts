import { RECORD_FORMATS } from '@skippr/connector-api'
import * as v from 'valibot'

export const stdoutConfig = v.strictObject({
  format: v.optional(
    v.pipe(
      v.picklist(RECORD_FORMATS),
      v.description('Print rows as jsonl or csv (a header row per part); by default each part as it arrives'),
    ),
  ),
})

export type StdoutConfig = v.InferOutput<typeof stdoutConfig>
