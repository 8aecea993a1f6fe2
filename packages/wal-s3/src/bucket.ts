/** The few S3 calls the WAL makes, on one bucket, with its failures classified (errors.ts). */
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3'
import { nameOf, statusOf } from '@skippr/s3-client'
import { bucketMissing, classifyS3 } from './errors.js'

export interface ListedObject {
  readonly key: string
  readonly size: number
}

/** DeleteObjects takes at most this many keys. */
const DELETE_BATCH = 1000

export class Bucket {
  constructor(
    private readonly client: S3Client,
    readonly name: string,
    /** For messages: `s3://bucket/prefix…`. */
    readonly where: string,
  ) {}

  async check(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.name }))
    } catch (error) {
      throw statusOf(error) === 404 ? bucketMissing(this.where, error) : classifyS3(error, this.where)
    }
  }

  async put(key: string, body: Uint8Array): Promise<void> {
    try {
      await this.client.send(
        new PutObjectCommand({ Bucket: this.name, Key: key, Body: body, ContentLength: body.length }),
      )
    } catch (error) {
      throw classifyS3(error, this.where)
    }
  }

  /** The object's bytes; undefined when there is none. */
  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      const answer = await this.client.send(new GetObjectCommand({ Bucket: this.name, Key: key }))
      return (await answer.Body?.transformToByteArray()) ?? new Uint8Array(0)
    } catch (error) {
      if (statusOf(error) === 404 || nameOf(error) === 'NoSuchKey') return undefined
      throw classifyS3(error, this.where)
    }
  }

  /** Every object under `prefix` after `startAfter`, in key order. */
  async list(prefix: string, startAfter?: string): Promise<ListedObject[]> {
    const objects: ListedObject[] = []
    let token: string | undefined
    try {
      do {
        const page = await this.client.send(
          new ListObjectsV2Command({
            Bucket: this.name,
            Prefix: prefix,
            ...(startAfter !== undefined && token === undefined && { StartAfter: startAfter }),
            ...(token !== undefined && { ContinuationToken: token }),
          }),
        )
        for (const item of page.Contents ?? [])
          if (item.Key !== undefined) objects.push({ key: item.Key, size: item.Size ?? 0 })
        token = page.IsTruncated ? page.NextContinuationToken : undefined
      } while (token !== undefined)
    } catch (error) {
      throw classifyS3(error, this.where)
    }
    return objects
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (let at = 0; at < keys.length; at += DELETE_BATCH) {
      const batch = keys.slice(at, at + DELETE_BATCH)
      try {
        await this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.name,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
        )
      } catch (error) {
        throw classifyS3(error, this.where)
      }
    }
  }
}
