import { afterEach, describe, expect, it } from 'vitest'
import { openStateStore, type PipelineState, type StateStore } from '../src/index.js'
import { tempDataDir } from './helpers.js'

const opened: StateStore[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()))
})

async function pipeline(dataDir?: string): Promise<PipelineState> {
  const store = await openStateStore({ dataDir: dataDir ?? (await tempDataDir()) })
  opened.push(store)
  return store.pipeline('bikehire')
}

const v1 = { fields: [{ name: 'rental_id', type: 'long' }] }
const v2 = {
  fields: [
    { name: 'rental_id', type: 'long' },
    { name: 'bike_id', type: 'int' },
  ],
}

describe('schemas', () => {
  it('numbers versions from 1 and bumps them only when the schema changes', async () => {
    const p = await pipeline()
    expect(await p.saveSchema('rentals', v1)).toBe(1)
    expect(await p.saveSchema('rentals', v1)).toBe(1)
    expect(await p.saveSchema('rentals', v2)).toBe(2)
    expect(await p.saveSchema('rentals', v2)).toBe(2)
    // Going back to an earlier shape is a change too.
    expect(await p.saveSchema('rentals', v1)).toBe(3)
  })

  it('treats objects that differ only in key order as the same schema', async () => {
    const p = await pipeline()
    expect(await p.saveSchema('ns', { a: 1, b: { c: 2, d: 3 } })).toBe(1)
    expect(await p.saveSchema('ns', { b: { d: 3, c: 2 }, a: 1 })).toBe(1)
    // Array order is meaningful.
    expect(await p.saveSchema('ns', { a: 1, b: { c: 2, d: 3 }, e: [1, 2] })).toBe(2)
    expect(await p.saveSchema('ns', { a: 1, b: { c: 2, d: 3 }, e: [2, 1] })).toBe(3)
  })

  it('keeps every version readable, and the newest by default', async () => {
    const p = await pipeline()
    await p.saveSchema('rentals', v1)
    await p.saveSchema('rentals', v2)
    expect(await p.getSchema('rentals')).toMatchObject({ namespace: 'rentals', version: 2, schema: v2 })
    expect(await p.getSchema('rentals', 1)).toMatchObject({ namespace: 'rentals', version: 1, schema: v1 })
    expect(await p.getSchema('rentals', 3)).toBeUndefined()
    expect(await p.getSchema('stations')).toBeUndefined()
    expect((await p.getSchema('rentals'))?.savedAt).toBeInstanceOf(Date)
  })

  it('versions each namespace on its own and lists the newest of each', async () => {
    const p = await pipeline()
    await p.saveSchema('rentals', v1)
    await p.saveSchema('rentals', v2)
    await p.saveSchema('stations', { id: 'int' })
    await p.saveSchema('a/b', { x: 1 })
    // Ten versions, so the newest must not be picked by string order of the version number.
    for (let i = 0; i < 10; i++) await p.saveSchema('many', { i })
    const listed = (await p.listSchemas()).map(({ namespace, version }) => ({ namespace, version }))
    expect(listed).toEqual([
      { namespace: 'a/b', version: 1 },
      { namespace: 'many', version: 10 },
      { namespace: 'rentals', version: 2 },
      { namespace: 'stations', version: 1 },
    ])
    expect((await p.getSchema('many'))?.schema).toEqual({ i: 9 })
  })

  it('gives two writers saving the same new schema one version', async () => {
    const dataDir = await tempDataDir()
    const a = await pipeline(dataDir)
    const b = await pipeline(dataDir)
    await a.saveSchema('ns', v1)
    const versions = await Promise.all([a.saveSchema('ns', v2), b.saveSchema('ns', v2)])
    expect(versions).toEqual([2, 2])
    expect((await a.listSchemas()).map((s) => s.version)).toEqual([2])
  })
})
