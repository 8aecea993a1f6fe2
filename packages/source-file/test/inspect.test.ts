/** `check` and `count`: what `skipprd doctor` and `skipprd verify` ask the File source. */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { FILE_NOT_FOUND } from '../src/errors.js'
import { fileSource, tempDir } from './helpers.js'

const SCHEMA = [
  { name: 'id', type: 'int' as const },
  { name: 'v', type: 'string' as const },
]

describe('check', () => {
  it('opens every matched file', async () => {
    const dir = await tempDir()
    await mkdir(join(dir, 'in'))
    await writeFile(join(dir, 'in', 'a.csv'), 'id,v\n1,a\n')
    await writeFile(join(dir, 'in', 'b.csv'), 'id,v\n2,b\n')
    await fileSource(dir, { path: 'in/*.csv', format: 'csv', namespace: 'items' }).check()
  })

  it('fails without a file to infer the schema from, and passes with a configured schema', async () => {
    const dir = await tempDir()
    await expect(
      fileSource(dir, { path: 'in/*.csv', format: 'csv', namespace: 'items' }).check(),
    ).rejects.toMatchObject({ code: FILE_NOT_FOUND, message: expect.stringContaining('in/*.csv') })
    await fileSource(dir, { path: 'in/*.csv', format: 'csv', namespace: 'items', schema: SCHEMA }).check()
  })
})

describe('count', () => {
  it('counts the records of every file, those it refuses included, and 0 for another namespace', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'a.csv'), 'id,v\n1,a\n2,b\nx,c\n')
    await writeFile(join(dir, 'b.csv'), 'id,v\n4,"d\ne"\n5,f\n')
    const source = fileSource(dir, { path: '*.csv', format: 'csv', namespace: 'items', schema: SCHEMA })
    // `x` is no int: refused, but held by the files all the same.
    expect(await source.count('items')).toBe(5)
    expect(await source.count('other')).toBe(0)
    await writeFile(join(dir, 'c.csv'), 'id,v\n6,g\n')
    expect(await source.count('items')).toBe(6)
  })

  it('is 0 while no file matches', async () => {
    const dir = await tempDir()
    expect(
      await fileSource(dir, { path: 'items.jsonl', format: 'jsonl', schema: SCHEMA }).count('items'),
    ).toBe(0)
  })
})
