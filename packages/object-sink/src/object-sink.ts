/**
 * The overwrite-on-retry sink over any `ObjectStore`: each batch part becomes one object at a key
 * derived from the batch identity (layout.ts), created once. When a retry finds an object already
 * at its key, the checksum stored with it decides: the same bytes are this batch's own earlier
 * write (`already-landed` when every object is there), other bytes are someone else's (`fatal`).
 * A store whose server ignores the create-once condition rewrites identical bytes instead.
 *
 * Every object's bytes are encoded (and their records counted) before the first is created, so a
 * batch refused for its data leaves nothing behind. Rows refused for a value the format cannot hold
 * are collected from every object and answered as `refused`, naming each by its part in the batch.
 */
import type { NamespaceSchema, RefusedRow, Sink, SinkBatch, WriteOutcome } from '@skippr/connector-api'
import {
  alreadyLanded,
  BAD_RECORD,
  batchKey,
  cannotLand,
  hasCode,
  isPermanent,
  landed,
  partKey,
  ROW_COUNT_MISMATCH,
  refused,
  retryLater,
} from '@skippr/connector-api'
import type { FileEncoding, RecordsRefusedError } from '@skippr/file-formats'
import { contentType, encodeFile, fileExtension, RECORDS_REFUSED } from '@skippr/file-formats'
import { sha256 } from './checksum.js'
import { OBJECT_CONFLICT, ObjectConflictError } from './errors.js'
import { isPipelineKey, manifestKey, objectKey } from './layout.js'
import type { ManifestEntry } from './manifest.js'
import { manifestBody } from './manifest.js'
import type { ObjectInfo, ObjectStore } from './store.js'

/** Creates refused while no object is there, before the write is handed back to be retried later. */
const CREATE_ATTEMPTS = 3

export interface ObjectSinkOptions {
  readonly encoding: FileEncoding
  /** Writes `_manifests/…/<seq>.json` after each batch's objects. */
  readonly manifest: boolean
  /** The pipeline this sink writes for: its unfinished uploads are removed on open. */
  readonly pipeline: string
}

/** A batch's objects, or the rows refused for a value if there are any: then none is created. */
interface EncodedBatch {
  readonly objects: PendingObject[]
  readonly refusedRows: readonly RefusedRow[]
}

interface PendingObject {
  readonly key: string
  readonly namespace: string
  readonly rows: number
  readonly body: readonly Uint8Array[]
  readonly info: ObjectInfo
}

export class ObjectSink implements Sink {
  readonly guarantee = 'overwrite-on-retry' as const
  private opened: Promise<void> | undefined

  constructor(
    readonly store: ObjectStore,
    private readonly options: ObjectSinkOptions,
  ) {}

  /** Opens the store once; nothing per namespace: objects need no table. */
  async prepare(_schema: NamespaceSchema): Promise<void> {
    this.opened ??= this.store.open((key) => isPipelineKey(key, this.options.pipeline))
    try {
      await this.opened
    } catch (error) {
      this.opened = undefined
      throw error
    }
  }

  async write(batch: SinkBatch): Promise<WriteOutcome> {
    let encoded: EncodedBatch
    try {
      encoded = await this.encode(batch)
    } catch (error) {
      return hasCode(error, BAD_RECORD) || hasCode(error, ROW_COUNT_MISMATCH)
        ? cannotLand(error)
        : retryLater(error)
    }
    if (encoded.refusedRows.length > 0) return refused(encoded.refusedRows)
    const { objects } = encoded
    if (this.options.manifest) objects.push(this.manifest(batch, objects))
    try {
      let found = 0
      for (const object of objects) if ((await this.createOnce(object)) === 'exists') found++
      if (found === objects.length) return alreadyLanded()
    } catch (error) {
      return isPermanent(error) || hasCode(error, OBJECT_CONFLICT) ? cannotLand(error) : retryLater(error)
    }
    return landed(batch.parts.reduce((sum, part) => sum + part.rows, 0))
  }

  async close(): Promise<void> {
    await this.store.close()
  }

  /** Every part's object, and the rows of every part refused for a value (then no object is created). */
  private async encode(batch: SinkBatch): Promise<EncodedBatch> {
    const { encoding } = this.options
    const extension = fileExtension(encoding)
    const objects: PendingObject[] = []
    const refusedRows: RefusedRow[] = []
    for (const [index, part] of batch.parts.entries()) {
      const key = objectKey(part.namespace, batch.id, index, extension)
      const where = { target: `object ${this.where(key)}`, batch: batchKey(batch.id) }
      let body: Uint8Array[]
      try {
        body = await encodeFile([part], encoding, where)
      } catch (error) {
        if (!hasCode(error, RECORDS_REFUSED)) throw error
        // The object holds this part alone: its refusals are of part `index` of the batch.
        for (const row of (error as RecordsRefusedError).refusals) refusedRows.push({ ...row, part: index })
        continue
      }
      const info = {
        sha256: sha256(body),
        contentType: contentType(encoding),
        batch: partKey(batch.id, index),
      }
      objects.push({ key, namespace: part.namespace, rows: part.rows, body, info })
    }
    return { objects, refusedRows }
  }

  private manifest(batch: SinkBatch, objects: readonly PendingObject[]): PendingObject {
    const entries: ManifestEntry[] = objects.map((o) => ({
      key: o.key,
      namespace: o.namespace,
      rows: o.rows,
      bytes: o.body.reduce((sum, chunk) => sum + chunk.length, 0),
      sha256: o.info.sha256,
    }))
    const body = [manifestBody(batch.id, entries)]
    const info = { sha256: sha256(body), contentType: 'application/json', batch: batchKey(batch.id) }
    return { key: manifestKey(batch.id), namespace: '', rows: 0, body, info }
  }

  /** Creates the object, or proves that the one at its key holds the same bytes. */
  private async createOnce(object: PendingObject): Promise<'created' | 'exists'> {
    for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
      if ((await this.store.create(object.key, object.body, object.info)) === 'created') return 'created'
      const stored = await this.store.stat(object.key)
      // Gone again between the refusal and the look (someone removed it): create it anew.
      if (stored === undefined) continue
      if (stored.sha256 !== object.info.sha256)
        throw new ObjectConflictError(this.where(object.key), stored.sha256, object.info.sha256)
      return 'exists'
    }
    throw new Error(
      `${this.where(object.key)}: the store refuses to create the object, yet none is there; will retry`,
    )
  }

  private where(key: string): string {
    return `${this.store.location}/${key}`
  }
}
