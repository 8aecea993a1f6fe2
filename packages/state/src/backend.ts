import type { JsonValue } from './json.js'

/** A stored value and its version. The version changes on every write of the key. */
export interface StateEntry {
  readonly value: JsonValue
  readonly version: number
}

export interface StateItem extends StateEntry {
  readonly key: string
}

/**
 * When a put may happen: the key's current version is `expectedVersion`, or the key is absent.
 * (DynamoDB: `ConditionExpression` on a version attribute, or `attribute_not_exists`.)
 */
export type PutCondition = { readonly expectedVersion: number } | { readonly mustNotExist: true }

/** A refused put says what it found instead, so the caller can retry without another read. */
export type PutResult =
  | { readonly ok: true; readonly version: number }
  | { readonly ok: false; readonly current: StateEntry | undefined }

/**
 * The narrow key-value contract every state store implements: single-key reads and conditional
 * writes, no multi-key transactions. Reads see every write that completed before they started,
 * in any process. A write that resolved is durable.
 */
export interface StateBackend {
  get(key: string): Promise<StateEntry | undefined>
  put(key: string, value: JsonValue, condition?: PutCondition): Promise<PutResult>
  /** Resolves to whether the key existed. */
  delete(key: string): Promise<boolean>
  /** Every key that starts with `prefix`, in key order. */
  list(prefix: string): Promise<StateItem[]>
  close(): Promise<void>
}
