/**
 * What a request is answered once its fate is known: the status and a one-line JSON body. A
 * request is answered 200 only after the WAL commit holding its rows.
 */
import { PushAbandonedError, PushDecodeError, PushQueueFullError } from '@skippr/push-source'

export interface Answer {
  readonly status: number
  readonly body: Record<string, unknown>
  readonly headers?: Record<string, string>
}

export const committed = (rows: number, duplicate = false): Answer => ({
  status: 200,
  body: duplicate ? { rows: 0, duplicate: true } : { rows },
})

export const unauthorized: Answer = {
  status: 401,
  body: { error: 'missing or wrong bearer token' },
  headers: { 'www-authenticate': 'Bearer' },
}

export const tooLarge = (max: number): Answer => ({
  status: 413,
  body: { error: `the request body is larger than ${max} bytes (max_request_bytes)` },
})

export const stopping: Answer = {
  status: 503,
  body: { error: 'the source is stopping or not running; retry' },
  headers: { 'retry-after': '1' },
}

/** While another sync holds the pipeline's writer lease (this process stands by). */
export const notWriter = (pipeline: string): Answer => ({
  status: 503,
  body: {
    error: `this skipprd does not hold the writer lease of pipeline ${pipeline}: another sync does; retry, or send to that one`,
  },
  headers: { 'retry-after': '1' },
})

/** While the WAL is full (the destination lands slower than clients send): nothing is taken. */
export const walFull: Answer = {
  status: 429,
  body: { error: 'the WAL is full: the destination lands more slowly than requests arrive; retry later' },
  headers: { 'retry-after': '1' },
}

/** The answer to a push that did not commit, or was not taken. */
export function failed(error: unknown): Answer {
  if (error instanceof PushDecodeError) return { status: 400, body: { error: error.message } }
  if (error instanceof PushQueueFullError)
    return {
      status: 429,
      body: { error: 'too many bytes wait for their commit; retry later' },
      headers: { 'retry-after': '1' },
    }
  if (error instanceof PushAbandonedError && error.why === 'stopping') return stopping
  return { status: 500, body: { error: 'the rows were not committed; retry' } }
}
