import { describe, expect, it } from 'vitest'
import { isPipelineKey, manifestKey, normalizePrefix, objectKey, underPrefix } from '../src/index.js'

const id = { pipeline: 'orders-sync', epoch: 'e1', seq: 42n }

describe('object keys', () => {
  it('come from the batch identity alone: namespace, pipeline, epoch, seq and part', () => {
    expect(objectKey('orders', id, 0, 'parquet')).toBe('orders/orders-sync/e1/000000000042-0.parquet')
    expect(objectKey('orders', id, 3, 'csv.gz')).toBe('orders/orders-sync/e1/000000000042-3.csv.gz')
    expect(manifestKey(id)).toBe('_manifests/orders-sync/e1/000000000042.json')
  })

  it('make names from source data one key segment each, so none adds a level or escapes the prefix', () => {
    expect(objectKey('../a/b', { ...id, pipeline: 'p/q' }, 0, 'jsonl')).toBe(
      '%2E.%2Fa%2Fb/p%2Fq/e1/000000000042-0.jsonl',
    )
    expect(objectKey('50%', id, 0, 'jsonl').split('/')[0]).toBe('50%25')
  })

  it("tell a pipeline's keys and key prefixes from another's", () => {
    expect(isPipelineKey('orders/orders-sync/e1/000000000042-0.jsonl', 'orders-sync')).toBe(true)
    expect(isPipelineKey('_manifests/orders-sync/e1/000000000042.json', 'orders-sync')).toBe(true)
    expect(isPipelineKey('orders/orders-sync/', 'orders-sync')).toBe(true)
    expect(isPipelineKey('orders/other/e1/000000000042-0.jsonl', 'orders-sync')).toBe(false)
    expect(isPipelineKey('orders/p%2Fq/', 'p/q')).toBe(true)
  })

  it('put keys under a prefix given with or without slashes', () => {
    expect(normalizePrefix('/raw/skippr/')).toBe('raw/skippr')
    expect(underPrefix('/raw/skippr/', 'a/b')).toBe('raw/skippr/a/b')
    expect(underPrefix('', 'a/b')).toBe('a/b')
  })
})
