/**
 * The `aws-chunked` body encoding, which the AWS SDK uses for streamed uploads so that it can send
 * the checksum in a trailer: `<hex size>[;chunk-signature=…]\r\n<bytes>\r\n`, …, a 0-size chunk,
 * then trailer lines.
 */
import type { IncomingHttpHeaders } from 'node:http'

/** True when the request body is aws-chunked rather than the object's bytes. */
export function isAwsChunked(headers: IncomingHttpHeaders): boolean {
  const encoding = headers['content-encoding'] ?? ''
  const payload = String(headers['x-amz-content-sha256'] ?? '')
  return encoding.split(',').some((part) => part.trim() === 'aws-chunked') || payload.startsWith('STREAMING-')
}

/** The object's bytes; ignores chunk signatures and trailers, which this fake does not check. */
export function decodeAwsChunked(body: Buffer): Buffer {
  const chunks: Buffer[] = []
  let position = 0
  for (;;) {
    const lineEnd = body.indexOf('\r\n', position)
    if (lineEnd < 0) throw new Error('aws-chunked body ends inside a chunk header')
    const size = Number.parseInt(body.subarray(position, lineEnd).toString('latin1').split(';')[0]!, 16)
    const start = lineEnd + 2
    if (!Number.isInteger(size) || start + size > body.length) {
      throw new Error('aws-chunked body has a bad chunk size')
    }
    if (size === 0) return Buffer.concat(chunks)
    chunks.push(body.subarray(start, start + size))
    position = start + size + 2
  }
}
