import path from 'node:path'
import { normalizePrefix, objectSinkFields } from '@skippr/object-sink'
import * as v from 'valibot'

export const fileConfig = v.strictObject({
  path: v.pipe(
    v.string(),
    v.minLength(1),
    v.description('The output directory, relative to skippr.yml; created if missing'),
  ),
  ...objectSinkFields,
})

export type FileConfig = v.InferOutput<typeof fileConfig>

/** The directory the files go under: `path` resolved against skippr.yml's directory, with the prefix below it. */
export function fileRoot(config: Pick<FileConfig, 'path' | 'prefix'>, configDir: string): string {
  return path.join(path.resolve(configDir, config.path), normalizePrefix(config.prefix))
}
