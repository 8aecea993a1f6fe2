import { RECORD_FORMATS } from '@skippr/connector-api'
import { z } from 'zod'

export const fileConfig = z.strictObject({
  path: z.string().min(1).describe('The output directory, relative to skippr.yml; created if missing'),
  format: z.enum(RECORD_FORMATS).describe('The output files: jsonl (JSON lines) or csv (with a header row)'),
})

export type FileConfig = z.infer<typeof fileConfig>
