import { encodingFields } from '@skippr/file-formats'
import * as v from 'valibot'

export const fileConfig = v.strictObject({
  path: v.pipe(
    v.string(),
    v.minLength(1),
    v.description('The output directory, relative to skippr.yml; created if missing'),
  ),
  ...encodingFields,
})

export type FileConfig = v.InferOutput<typeof fileConfig>
