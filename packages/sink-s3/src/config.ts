import { crossFieldCheck } from '@skippr/connector-api'
import { objectSinkFields } from '@skippr/object-sink'
import * as v from 'valibot'

const MIB = 1024 * 1024
/** S3's smallest part but the last. */
export const MIN_PART_MIB = 5

export const s3SinkConfig = v.pipe(
  v.strictObject({
    bucket: v.pipe(
      v.string(),
      v.minLength(1),
      v.description('The bucket the objects are written to; it must exist'),
    ),
    region: v.optional(
      v.pipe(
        v.string(),
        v.minLength(1),
        v.description('The bucket region; AWS_REGION or the AWS config by default'),
      ),
    ),
    endpoint: v.optional(
      v.pipe(
        v.string(),
        v.url(),
        v.description('An S3-compatible server (MinIO, R2, GCS interop), e.g. http://minio:9000'),
      ),
    ),
    force_path_style: v.optional(
      v.pipe(
        v.boolean(),
        v.description(
          'Address buckets as <endpoint>/<bucket>; on by default when the endpoint is an IP address or localhost',
        ),
      ),
    ),
    access_key_id: v.optional(v.pipe(v.string(), v.minLength(1), v.description('Access key id (secret)'))),
    secret_access_key: v.optional(
      v.pipe(v.string(), v.minLength(1), v.description('Secret access key (secret)')),
    ),
    session_token: v.optional(
      v.pipe(v.string(), v.minLength(1), v.description('Session token of temporary credentials (secret)')),
    ),
    part_size_mib: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(MIN_PART_MIB),
        v.maxValue(5 * 1024),
        v.description('Objects larger than this are uploaded in parts of this size (MiB)'),
      ),
      16,
    ),
    ...objectSinkFields,
  }),
  crossFieldCheck((config) =>
    (config.access_key_id === undefined) === (config.secret_access_key === undefined)
      ? []
      : [
          {
            path: [config.access_key_id === undefined ? 'access_key_id' : 'secret_access_key'],
            message:
              'access_key_id and secret_access_key go together: give both, or neither to use the standard AWS credentials',
          },
        ],
  ),
)

export type S3SinkConfig = v.InferOutput<typeof s3SinkConfig>

export function partSizeBytes(config: Pick<S3SinkConfig, 'part_size_mib'>): number {
  return config.part_size_mib * MIB
}
