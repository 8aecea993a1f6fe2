/** The errors the fake S3 server answers with, as S3 names them; the answer's XML body is in s3-xml.ts. */

/** An S3 error answer: the status, S3's error code and its message. */
export class S3Error extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

/** `501 NotImplemented`, for the parts of S3 the fake leaves out. */
export const notImplemented = (what: string) =>
  new S3Error(501, 'NotImplemented', `${what} is not supported by this fake S3 server`)
