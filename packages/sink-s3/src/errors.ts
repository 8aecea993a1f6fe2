/**
 * S3 failures, each one line naming the bucket or object (never a credential), classified: the
 * bucket, the credentials and the permissions are the operator's to fix and are `permanent`;
 * throttling, server errors, a racing conditional write and a lost connection are retried.
 */
import { hasNetworkCode, permanent, SkipprError } from '@skippr/connector-api'
import { isCredentialsRefused, isTransientStatus, messageOf, nameOf, statusOf } from '@skippr/s3-client'

export const S3_BUCKET_MISSING = 'SKIPPR_S3_BUCKET_MISSING'
export const S3_ACCESS_DENIED = 'SKIPPR_S3_ACCESS_DENIED'
export const S3_REQUEST_REFUSED = 'SKIPPR_S3_REQUEST_REFUSED'
export const S3_UNAVAILABLE = 'SKIPPR_S3_UNAVAILABLE'

/** The SDK's error as the error the sink hands the runner. */
export function classify(error: unknown, where: string): Error {
  const name = nameOf(error)
  const status = statusOf(error)
  const detail = messageOf(error)
  if (name === 'NoSuchBucket') return bucketMissing(error, where)
  if (isCredentialsRefused(error))
    return permanent(
      new SkipprError(
        S3_ACCESS_DENIED,
        `${where}: the credentials were refused (${name}); check access_key_id and secret_access_key, or the AWS credentials of this process`,
        { cause: error },
      ),
    )
  if (status === 403 || name === 'AccessDenied')
    return permanent(
      new SkipprError(
        S3_ACCESS_DENIED,
        `${where}: access denied (${detail}); check the credentials, and that they may s3:PutObject, s3:GetObject, s3:ListBucket and s3:AbortMultipartUpload on the bucket and prefix`,
        { cause: error },
      ),
    )
  if (isTransient(error))
    return new SkipprError(S3_UNAVAILABLE, `${where}: ${detail}; will retry`, { cause: error })
  // Any other 4xx is a request the service will refuse again (a bad key, an unsupported option).
  if (status !== undefined && status >= 400 && status < 500)
    return permanent(
      new SkipprError(S3_REQUEST_REFUSED, `${where}: refused with ${status} ${name} (${detail})`, {
        cause: error,
      }),
    )
  return new SkipprError(S3_UNAVAILABLE, `${where}: ${detail}; will retry`, { cause: error })
}

/** The bucket does not exist: a NoSuchBucket error, or HeadBucket's bare 404 (a HEAD has no body to name it). */
export function bucketMissing(error: unknown, where: string): Error {
  return permanent(
    new SkipprError(
      S3_BUCKET_MISSING,
      `${where}: the bucket does not exist; create it or fix bucket (and region or endpoint)`,
      { cause: error },
    ),
  )
}

function isTransient(error: unknown): boolean {
  return (
    isTransientStatus(error) || hasNetworkCode(error) || hasNetworkCode((error as { cause?: unknown }).cause)
  )
}
