/**
 * The overwrite-on-retry sink over any `ObjectStore`: each batch part becomes one object at a key
 * derived from the batch identity (layout.ts), created once. When a retry finds an object already
 * at its key, the checksum stored with it decides: the same bytes are this batch's own earlier
 * write (`already-landed` when every object is there), other bytes are someone else's (`fatal`).
 * A store whose server ignores the create-once condition rewrites identical bytes instead.
 *
 * With a `partition_by` template, each part's objects go under the levels it renders from the
 * batch's commit time (from the WAL) and, when it takes row values, one object per set of values:
 * the part's records of those values, in their order, with their bytes as committed.
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
  permanent,
  ROW_COUNT_MISMATCH,
  refused,
  retryLater,
} from '@skippr/connector-api'
import type { FileEncoding, FilePart, RecordsRefusedError } from '@skippr/file-formats'
import {
  contentType,
  encodeFile,
  fieldTexts,
  fileExtension,
  RECORDS_REFUSED,
  splitRecords,
} from '@skippr/file-formats'
import { sha256 } from './checksum.js'
import { OBJECT_CONFLICT, ObjectConflictError, PartitionFieldError } from './errors.js'
import type { Partition } from './layout.js'
import { isPipelineKey, manifestKey, objectKey } from './layout.js'
import type { ManifestEntry } from './manifest.js'
import { manifestBody } from './manifest.js'
import type { PartitionTemplate } from './partition-template.js'
import type { ObjectInfo, ObjectStore } from './store.js'

/** Creates refused while no object is there, before the write is handed back to be retried later. */
const CREATE_ATTEMPTS = 3

export interface ObjectSinkOptions {
  readonly encoding: FileEncoding
  /** Writes `_manifests/…/<seq>.json` after each batch's objects. */
  readonly manifest: boolean
  /** The pipeline this sink writes for: its unfinished uploads are removed on open. */
  readonly pipeline: string
  /** Hive-style levels under each namespace (`partition_by`); none by default. */
  readonly partitionBy?: PartitionTemplate | undefined
}

/** Some of a part's rows, and where their object goes. */
interface Split {
  readonly part: FilePart
  readonly partition?: Partition
  /** The record index in the whole part of each of `part`'s records; absent when `part` is the whole part. */
  readonly records?: readonly number[]
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

  /** Opens the store once; per namespace, only checks it has the fields `partition_by` takes. */
  async prepare(schema: NamespaceSchema): Promise<void> {
    this.checkFields(schema)
    const depth = this.options.partitionBy?.depth ?? 0
    this.opened ??= this.store.open((key) => isPipelineKey(key, this.options.pipeline, depth))
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
      for (const part of batch.parts) this.checkFields(part.schema)
      encoded = await this.encode(batch)
    } catch (error) {
      return hasCode(error, BAD_RECORD) || hasCode(error, ROW_COUNT_MISMATCH) || isPermanent(error)
        ? cannotLand(error)
        : retryLater(error)
    }
    if (encoded.refusedRows.length > 0) return refused(encoded.refusedRows)
    const { objects } = encoded
    if (this.options.manifest) objects.push(this.manifest(batch, objects))
    try {
      let found = 0
      for (const object of objects) if ((await this.createOnce(object)) === 'exists') found++
      if (objects.length > 0 && found === objects.length) return alreadyLanded()
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
    for (const [index, whole] of batch.parts.entries()) {
      for (const { part, partition, records } of this.split(batch, whole)) {
        const key = objectKey(part.namespace, batch.id, index, extension, partition)
        const where = { target: `object ${this.where(key)}`, batch: batchKey(batch.id) }
        let body: Uint8Array[]
        try {
          body = await encodeFile([part], encoding, where)
        } catch (error) {
          if (!hasCode(error, RECORDS_REFUSED)) throw error
          // The object holds rows of part `index` alone: each refusal is named by its record in that part.
          for (const row of (error as RecordsRefusedError).refusals)
            refusedRows.push({ ...row, part: index, row: records?.[row.row] ?? row.row })
          continue
        }
        const info = {
          sha256: sha256(body),
          contentType: contentType(encoding),
          batch: partKey(batch.id, index),
        }
        objects.push({ key, namespace: part.namespace, rows: part.rows, body, info })
      }
    }
    return { objects, refusedRows }
  }

  /**
   * The part's objects: the whole part without a template, or under the levels the template
   * renders; split by the values of the fields it takes into one object per set of values (groups
   * numbered in the order their first row comes), each row in its place in the part.
   */
  private split(batch: SinkBatch, part: FilePart): Split[] {
    const template = this.options.partitionBy
    if (template === undefined) return [{ part }]
    if (template.fields.length === 0)
      return [{ part, partition: { levels: template.render(batch.committedAt, []) } }]
    const groups = new Map<string, number[]>()
    fieldTexts(part, template.fields).forEach((values, record) => {
      const levels = template.render(batch.committedAt, values)
      const group = groups.get(levels)
      if (group) group.push(record)
      else groups.set(levels, [record])
    })
    const parts = splitRecords(part, [...groups.values()])
    return [...groups].map(([levels, records], group) => ({
      part: parts[group] as FilePart,
      partition: { levels, group },
      records,
    }))
  }

  /** Throws, for good, when the namespace lacks a field the template takes values of. */
  private checkFields(schema: NamespaceSchema): void {
    const template = this.options.partitionBy
    const names = schema.fields.map((field) => field.name)
    const missing = template?.fields.find((field) => !names.includes(field))
    if (template !== undefined && missing !== undefined)
      throw permanent(new PartitionFieldError(template.template, schema.namespace, missing, names))
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
