/**
 * How a pushed payload holds its records: JSON lines, JSON (one object, or an array of them), CSV
 * with a header row, or `bytes`: the whole payload as one record of one column (`payload`, base64).
 */
export const PUSH_FORMATS = ['jsonl', 'json', 'csv', 'bytes'] as const
export type PushFormat = (typeof PUSH_FORMATS)[number]

/** The column a `bytes` payload lands in. */
export const BYTES_COLUMN = 'payload'
