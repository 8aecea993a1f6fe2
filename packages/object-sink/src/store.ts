/**
 * The seam between the object sink and one kind of storage (an S3 bucket, an Azure container, a
 * directory on an SFTP server). A store knows how to create an object once and how to describe
 * what is already there; the sink owns keys, encodings, checksums and outcomes. Every store runs
 * the same contract suite (`objectStoreSuite` in @skippr/conformance).
 *
 * Keys are `/`-separated and relative to the store's root (its bucket and prefix); the store adds
 * the root. Errors a retry cannot fix (missing bucket, refused credentials, no permission) are
 * thrown marked with connector-api's `permanent`; any other thrown error is retried.
 */

/** What the sink stores with an object, so that a later attempt can tell its own object from another. */
export interface ObjectInfo {
  /** SHA-256 of the object's bytes, lowercase hex. */
  readonly sha256: string
  readonly contentType: string
  /** The batch part the object holds (`partKey`), for people reading the store. */
  readonly batch: string
}

/** An object that exists. */
export interface StoredObject {
  /** Its SHA-256 as stored with it (or computed from its bytes where the store keeps no metadata); undefined if unknown. */
  readonly sha256: string | undefined
  readonly bytes: number
}

/** `created`: the object is there now with these bytes. `exists`: the store refused, as an object was there already. */
export type CreateResult = 'created' | 'exists'

export interface ObjectStore {
  /** The root as a message shows it, without credentials: `s3://bucket/prefix`. */
  readonly location: string
  /** Whether `create` refuses an existing key (`If-None-Match: *`); false where the server ignores the condition. */
  readonly createsOnce: boolean
  /**
   * Checks that the root is reachable and writable, and removes what an earlier writer left
   * unfinished (multipart uploads, temporary files) for the keys `isOwnKey` accepts. `isOwnKey`
   * also answers for a key prefix of two or more levels ending in `/` (`orders/<pipeline>/`), so
   * a store can skip whole directories of other pipelines. The sink calls it once, before its
   * first write, while no write of its own is in flight.
   */
  open(isOwnKey: (key: string) => boolean): Promise<void>
  /**
   * Creates `key` with the bytes of `body` (chunks in order) and `info`, unless an object is
   * there: then nothing is changed and the result is `exists`. A store whose server ignores the
   * condition writes the object again and answers `created` (overwrite on retry). The object
   * appears whole or not at all.
   */
  create(key: string, body: readonly Uint8Array[], info: ObjectInfo): Promise<CreateResult>
  /** The object at `key`, or undefined when there is none. */
  stat(key: string): Promise<StoredObject | undefined>
  /** Every object key under `prefix` (relative to the root), sorted; no unfinished uploads or temporary files. */
  list(prefix: string): Promise<string[]>
  /** The object's bytes. */
  read(key: string): Promise<Uint8Array>
  close(): Promise<void>
}
