import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { defaultNamespace, matchFiles } from '../src/match.js'
import { tempDir } from './helpers.js'

describe('defaultNamespace', () => {
  it.each([
    ['rentals.csv', 'rentals'],
    ['data/rentals.csv', 'rentals'],
    ['data/rentals-*.csv', 'rentals'],
    ['logs/**/app_[0-9].jsonl', 'app'],
    ['events.{csv,jsonl}', 'events'],
    ['*.csv', undefined],
    ['{a,b}.csv', undefined],
  ])('%s → %s', (path, namespace) => {
    expect(defaultNamespace(path)).toBe(namespace)
  })
})

describe('matchFiles', () => {
  it('lists glob matches relative to the config directory, in order, files only', async () => {
    const dir = await tempDir()
    await mkdir(join(dir, 'data/sub'), { recursive: true })
    for (const name of ['data/b.csv', 'data/a.csv', 'data/sub/c.csv', 'data/x.jsonl']) {
      await writeFile(join(dir, name), 'a\n')
    }
    await mkdir(join(dir, 'data/dir.csv'))
    expect((await matchFiles('data/*.csv', dir)).map((f) => f.key)).toEqual(['data/a.csv', 'data/b.csv'])
    expect((await matchFiles('data/**/*.csv', dir)).map((f) => f.key)).toEqual([
      'data/a.csv',
      'data/b.csv',
      'data/sub/c.csv',
    ])
    expect(await matchFiles('data/*.parquet', dir)).toEqual([])
  })

  it.each([
    ['data/?.csv', ['data/a.csv', 'data/b.csv']],
    ['data/[a].csv', ['data/a.csv']],
    ['data/{a,x}.*', ['data/a.csv', 'data/x.jsonl']],
    ['data/@(a|b).csv', ['data/a.csv', 'data/b.csv']],
  ])('takes %s as a pattern', async (pattern, keys) => {
    const dir = await tempDir()
    await mkdir(join(dir, 'data'))
    for (const name of ['data/b.csv', 'data/a.csv', 'data/x.jsonl']) await writeFile(join(dir, name), 'a\n')
    expect((await matchFiles(pattern, dir)).map((f) => f.key)).toEqual(keys)
  })

  it('takes a path without wildcards literally, and accepts absolute paths', async () => {
    const dir = await tempDir()
    await writeFile(join(dir, 'odd(1).csv'), 'a\n')
    const [file] = await matchFiles('odd(1).csv', dir)
    expect(file).toEqual({ key: 'odd(1).csv', path: join(dir, 'odd(1).csv') })
    expect(await matchFiles(join(dir, 'odd(1).csv'), '/')).toHaveLength(1)
    expect(await matchFiles('missing.csv', dir)).toEqual([])
  })
})
