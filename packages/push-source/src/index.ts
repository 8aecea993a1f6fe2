/**
 * What push sources (HttpServer, Websocket) share: decoding a pushed payload into a chunk's rows
 * (`decodePayload`), per-namespace schemas (`PushSchemas`), and the queue between senders and the
 * runner (`PushQueue`): a push resolves once the WAL commit holding its rows happened, and bytes
 * not committed yet are capped. See README.md "API".
 */
export type { DecodedPayload } from './decode.js'
export { decodePayload } from './decode.js'
export { PushAbandonedError, PushDecodeError, PushQueueFullError } from './errors.js'
export type { PushFormat } from './format.js'
export { BYTES_COLUMN, PUSH_FORMATS } from './format.js'
export type { PushOffset } from './offset.js'
export { parsePushOffset } from './offset.js'
export type { Push, PushQueueOptions } from './queue.js'
export { PushQueue } from './queue.js'
export { PushSchemas } from './schemas.js'
