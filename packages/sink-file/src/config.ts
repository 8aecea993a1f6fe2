import { RECORD_FORMATS } from '@skippr/connector-api'
import * as v from 'valibot'

export const fileConfig = v.strictObject({
  path: v.pipe(
    v.string(),
    v.minLength(1),
    v.description('The output directory, relative to skippr.yml; created if missing'),
  ),
  format: v.pipe(
    v.picklist(RECORD_FORMATS),
    v.description('The output files: jsonl (JSON lines) or csv (with a header row)'),
  ),
})

export type FileConfig = v.InferOutput<typeof fileConfig>
