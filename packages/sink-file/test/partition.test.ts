/**
 * `partition_by` into the File sink: the shared suite on a real directory (levels from the WAL
 * commit time, one file per value, NULL and escaping as Hive, a retry days later finding the same
 * files), and the levels as directories on disk that stay inside the output directory.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { allTypesSchema, PARTITION_TEMPLATE, partitionedBatch, partitionSuite } from '@skippr/conformance'
import * as v from 'valibot'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { fileConfig, fileRoot, LocalStore } from '../src/index.js'
import { fileSinkAt } from './helpers.js'

let dir = ''
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'skippr-file-partition-'))
})
afterAll(() => rm(dir, { recursive: true, force: true }))

partitionSuite({
  name: 'file (local directory)',
  sinkAt: async (prefix, fields) => ({
    sink: fileSinkAt(dir, { format: 'jsonl', prefix, ...fields }, 'orders-sync'),
    store: new LocalStore(fileRoot(v.parse(fileConfig, { path: 'out', prefix, format: 'jsonl' }), dir)),
  }),
})

it('the levels are directories under the namespace, each value one of them, none outside the output directory', async () => {
  const sink = fileSinkAt(
    dir,
    { format: 'csv', prefix: 'dirs', partition_by: PARTITION_TEMPLATE },
    'orders-sync',
  )
  await sink.prepare(allTypesSchema('orders'))
  expect((await sink.write(partitionedBatch())).status).toBe('landed')
  const root = path.join(dir, 'out', 'dirs')
  expect(await readdir(root)).toEqual(['orders'])
  expect(await readdir(path.join(root, 'orders'))).toEqual(['dt=2024-02-29'])
  const values = await readdir(path.join(root, 'orders', 'dt=2024-02-29', 'hour=23'))
  // `..` and `a/b` from rows are one level each, escaped; NULL and '' are the default partition.
  expect(values).toEqual(
    expect.arrayContaining(['name=%2E.', 'name=a%2Fb', 'name=__HIVE_DEFAULT_PARTITION__']),
  )
  expect(values.every((name) => name.startsWith('name='))).toBe(true)
  expect(
    await readdir(path.join(root, 'orders', 'dt=2024-02-29', 'hour=23', 'name=a%2Fb', 'orders-sync', 'e1')),
  ).toEqual(['000000000042-0-0.csv'])
  await sink.close()
})
