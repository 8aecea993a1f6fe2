import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import {
  DEFAULT_PARTITION,
  isPipelineKey,
  objectKey,
  objectSinkFields,
  PartitionTemplateError,
  parsePartitionTemplate,
  partitionValue,
} from '../src/index.js'

const committedAt = Date.UTC(2026, 2, 7, 9, 5, 3)

describe('partition_by templates', () => {
  it('render the commit time in UTC with strftime directives, and row values by field', () => {
    const template = parsePartitionTemplate(
      'dt={commit_time:%Y-%m-%d}/hour={commit_time:%H}/country={field:country}/{commit_time:%F_%M%S_%j}',
    )
    expect(template.depth).toBe(4)
    expect(template.fields).toEqual(['country'])
    expect(template.render(committedAt, ['US'])).toBe('dt=2026-03-07/hour=09/country=US/2026-03-07_0503_066')
  })

  it('take each field once, in order of first use', () => {
    const template = parsePartitionTemplate('{field:b}/a={field:a}/{field:b}-{field:a}')
    expect(template.fields).toEqual(['b', 'a'])
    expect(template.render(committedAt, ['x', 'y'])).toBe('x/a=y/x-y')
  })

  it('put NULL, the empty string and a batch without a commit time in the default partition', () => {
    const template = parsePartitionTemplate('dt={commit_time:%Y-%m-%d}/c={field:c}')
    expect(template.render(undefined, [null])).toBe(`dt=${DEFAULT_PARTITION}/c=${DEFAULT_PARTITION}`)
    expect(template.render(committedAt, [''])).toBe(`dt=2026-03-07/c=${DEFAULT_PARTITION}`)
  })

  it('escape values as Hive does, so a value is one level and distinct values stay distinct', () => {
    expect(partitionValue('a/b')).toBe('a%2Fb')
    expect(partitionValue('..')).toBe('%2E.')
    expect(partitionValue('k=v:1?#%')).toBe('k%3Dv%3A1%3F%23%25')
    expect(partitionValue('line\nbreak')).toBe('line%0Abreak')
    expect(partitionValue('São Paulo 🚲')).toBe('São Paulo 🚲')
    expect(partitionValue('%2F')).not.toBe(partitionValue('/'))
    const rendered = parsePartitionTemplate('c={field:c}').render(committedAt, ['../../etc'])
    expect(rendered.split('/')).toEqual(['c=%2E.%2F..%2Fetc'])
  })

  it.each([
    ['{nope}', 'unknown placeholder {nope}'],
    ['{time:%Y}', 'unknown placeholder {time:%Y}'],
    ['dt={commit_time:%Y-%q}', '"%q" in {commit_time:%Y-%q} is not one of'],
    ['dt={commit_time:}', 'has no pattern'],
    ['c={field:}', 'names no field'],
    ['../c={field:c}', 'a .. level'],
    ['a//b', 'an empty level'],
    ['/a', 'an empty level'],
    ['a b', 'holds a character other than'],
    ['dt={commit_time:%Y', 'unmatched {'],
    ['{commit_time:%Y/%m}', 'unmatched {'],
  ])('refuse %s with one line naming the mistake', (template, message) => {
    expect(() => parsePartitionTemplate(template)).toThrow(PartitionTemplateError)
    expect(() => parsePartitionTemplate(template)).toThrow(message)
    const parsed = v.safeParse(v.object(objectSinkFields), { format: 'jsonl', partition_by: template })
    expect(parsed.success).toBe(false)
    expect(parsed.issues?.[0]?.message).toContain(message)
    expect(parsed.issues?.[0]?.message).not.toContain('\n')
  })

  it('is optional in the shared config fields', () => {
    const parsed = v.parse(v.object(objectSinkFields), { format: 'csv' })
    expect(parsed.partition_by).toBeUndefined()
  })
})

describe('keys with partition levels', () => {
  const id = { pipeline: 'orders-sync', epoch: 'e1', seq: 42n }

  it('put the levels under the namespace, and keep the batch identity and value group in the file name', () => {
    expect(objectKey('orders', id, 3, 'jsonl', { levels: 'dt=2026-03-07/country=US', group: 1 })).toBe(
      'orders/dt=2026-03-07/country=US/orders-sync/e1/000000000042-3-1.jsonl',
    )
    expect(objectKey('orders', id, 0, 'parquet', { levels: 'dt=2026-03-07' })).toBe(
      'orders/dt=2026-03-07/orders-sync/e1/000000000042-0.parquet',
    )
  })

  it("tell this pipeline's keys from another's at the pipeline's level, and enter only prefixes above it", () => {
    const own = objectKey('orders', id, 0, 'jsonl', { levels: 'dt=2026-03-07/country=US', group: 0 })
    expect(isPipelineKey(own, 'orders-sync', 2)).toBe(true)
    expect(isPipelineKey(own.replace('orders-sync', 'other'), 'orders-sync', 2)).toBe(false)
    // A value that happens to be the pipeline's name, at another level, does not make a key its own.
    expect(isPipelineKey('orders/dt=1/orders-sync/other/e1/000000000042-0-0.jsonl', 'orders-sync', 2)).toBe(
      false,
    )
    expect(isPipelineKey('_manifests/orders-sync/e1/000000000042.json', 'orders-sync', 2)).toBe(true)
    expect(isPipelineKey('_manifests/other/e1/000000000042.json', 'orders-sync', 2)).toBe(false)
    expect(isPipelineKey('orders/', 'orders-sync', 2)).toBe(true)
    expect(isPipelineKey('orders/dt=2026-03-07/', 'orders-sync', 2)).toBe(true)
    expect(isPipelineKey('orders/dt=2026-03-07/country=US/', 'orders-sync', 2)).toBe(true)
    expect(isPipelineKey('orders/dt=2026-03-07/country=US/orders-sync/', 'orders-sync', 2)).toBe(true)
    expect(isPipelineKey('orders/dt=2026-03-07/country=US/other/', 'orders-sync', 2)).toBe(false)
  })
})
