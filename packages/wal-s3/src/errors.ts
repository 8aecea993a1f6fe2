/**
 * The S3 WAL's failures, each one line naming the bucket and prefix (never a credential). A
 * missing bucket, refused credentials and denied permissions are the operator's to fix; anything
 * else may pass (the pipeline's run fails and the next run starts from the committed log).
 */
import { isCredentialsRefused, messageOf, nameOf, statusOf } from '@skippr/s3-client'
import { WalError } from '@skippr/wal'

export const WAL_S3_BUCKET_MISSING = 'WAL_S3_BUCKET_MISSING'
export const WAL_S3_ACCESS_DENIED = 'WAL_S3_ACCESS_DENIED'
export const WAL_S3_UNAVAILABLE = 'WAL_S3_UNAVAILABLE'
export const WAL_FENCED = 'WAL_FENCED'

export function bucketMissing(where: string, cause?: unknown): WalError {
  return new WalError(
    WAL_S3_BUCKET_MISSING,
    `WAL ${where}: the bucket does not exist; create it, or set SKIPPR_WAL_S3_BUCKET (or --wal-s3-bucket) to one that does`,
    { cause },
  )
}

export function classifyS3(error: unknown, where: string): WalError {
  if (nameOf(error) === 'NoSuchBucket') return bucketMissing(where, error)
  if (isCredentialsRefused(error))
    return new WalError(
      WAL_S3_ACCESS_DENIED,
      `WAL ${where}: the credentials were refused (${nameOf(error)}); check the AWS credentials of this process`,
      { cause: error },
    )
  if (statusOf(error) === 403)
    return new WalError(
      WAL_S3_ACCESS_DENIED,
      `WAL ${where}: access denied (${messageOf(error)}); the WAL needs s3:PutObject, s3:GetObject, s3:ListBucket and s3:DeleteObject on the bucket and prefix`,
      { cause: error },
    )
  return new WalError(WAL_S3_UNAVAILABLE, `WAL ${where}: ${messageOf(error)}`, { cause: error })
}

/** Another writer opened the log since this one did: this one may publish nothing more. */
export class WalFencedError extends WalError {
  constructor(where: string) {
    super(
      WAL_FENCED,
      `WAL ${where}: another sync opened this pipeline's WAL after this one (this one lost its writer lease); it stops without writing more`,
    )
  }
}
