/**
 * The config fields every object destination shares, named as the vendor's connectors name them:
 * `prefix`, `format`, `compression`, `manifest`, and `partition_by` for Hive-style levels. A store
 * package spreads them into its schema beside its own (bucket, container, host, credentials).
 */
import type { ConnectorContext } from '@skippr/connector-api'
import type { Compression, FileFormat } from '@skippr/file-formats'
import { encodingFields } from '@skippr/file-formats'
import * as v from 'valibot'
import type { ObjectSinkOptions } from './object-sink.js'
import { PartitionTemplateError, parsePartitionTemplate } from './partition-template.js'

export const objectSinkFields = {
  prefix: v.optional(
    v.pipe(
      v.string(),
      v.check((prefix) => !prefix.split('/').includes('..'), 'the prefix must not hold a .. segment'),
      v.description('Key prefix every object is written under, e.g. raw/skippr; none by default'),
    ),
    '',
  ),
  ...encodingFields,
  manifest: v.optional(
    v.pipe(
      v.boolean(),
      v.description('Write _manifests/<pipeline>/<epoch>/<seq>.json after each batch, listing its objects'),
    ),
    false,
  ),
  partition_by: v.optional(
    v.pipe(
      v.string(),
      v.rawCheck(({ dataset, addIssue }) => {
        if (!dataset.typed) return
        try {
          parsePartitionTemplate(dataset.value)
        } catch (error) {
          if (!(error instanceof PartitionTemplateError)) throw error
          addIssue({ message: error.message })
        }
      }),
      v.description(
        'Hive-style key levels under each namespace, from the batch commit time stored in the WAL and row values, ' +
          'e.g. dt={commit_time:%Y-%m-%d}/country={field:country}; none by default',
      ),
    ),
  ),
}

export interface ObjectSinkConfig {
  readonly prefix: string
  readonly format: FileFormat
  readonly compression: Compression
  readonly manifest: boolean
  readonly partition_by?: string | undefined
}

export function objectSinkOptions(
  config: ObjectSinkConfig,
  context: Pick<ConnectorContext, 'pipeline'>,
): ObjectSinkOptions {
  return {
    encoding: { format: config.format, compression: config.compression },
    manifest: config.manifest,
    pipeline: context.pipeline,
    ...(config.partition_by === undefined
      ? {}
      : { partitionBy: parsePartitionTemplate(config.partition_by) }),
  }
}

/** The prefix without leading or trailing slashes; `''` for none. */
export function normalizePrefix(prefix: string): string {
  return prefix.replace(/^\/+|\/+$/g, '')
}

/** `key` under `prefix` (normalized): the full name of an object in its bucket or container. */
export function underPrefix(prefix: string, key: string): string {
  const root = normalizePrefix(prefix)
  return root === '' ? key : `${root}/${key}`
}
