import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  embeddedStore,
  INVALID_STATE_NAME,
  openStateStore,
  type StateStore,
  UNKNOWN_STORE_TYPE,
  UnknownStoreTypeError,
} from '../src/index.js'
import { tempDataDir } from './helpers.js'

const opened: StateStore[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()))
})

async function open(options: { dataDir?: string; workspace?: string } = {}): Promise<StateStore> {
  const store = await openStateStore({
    dataDir: options.dataDir ?? (await tempDataDir()),
    workspace: options.workspace,
  })
  opened.push(store)
  return store
}

describe('openStateStore', () => {
  it('keeps the embedded store under <dataDir>/state/', async () => {
    const dataDir = await tempDataDir()
    const store = await open({ dataDir })
    await store.pipeline('p').setEnabled(false)
    expect((await readdir(path.join(dataDir, 'state'))).sort()).toEqual(['state.mdb', 'state.mdb-lock'])
  })

  it('opens the embedded store, named sled, when no type is given', async () => {
    expect(embeddedStore.name).toBe('sled')
    const dataDir = await tempDataDir()
    const store = await openStateStore({ type: embeddedStore, dataDir })
    opened.push(store)
    expect(store.workspace).toBe('default')
    await store.pipeline('p').saveResumeOffset(1)
    const untyped = await open({ dataDir })
    expect(await untyped.pipeline('p').getResumeOffset()).toBe(1)
  })

  it('names the known store types when refusing an unknown one', () => {
    expect(new UnknownStoreTypeError('dynamo', ['sled', 'dynamodb'])).toMatchObject({
      code: UNKNOWN_STORE_TYPE,
      message:
        "unknown store type 'dynamo': expected sled or dynamodb (set --store-type or SKIPPR_STORE_TYPE)",
    })
  })

  it('refuses empty names', async () => {
    const store = await open()
    expect(() => store.pipeline('')).toThrow(expect.objectContaining({ code: INVALID_STATE_NAME }))
    await expect(openStateStore({ dataDir: await tempDataDir(), workspace: '' })).rejects.toMatchObject({
      code: INVALID_STATE_NAME,
    })
  })
})

describe('StateStore', () => {
  it('keeps pipelines apart, including names that need escaping', async () => {
    const store = await open()
    await store.pipeline('b/slash').saveResumeOffset(1)
    await store.pipeline('b/slash').saveSchema('rentals', { f: 1 })
    await store.pipeline('é c').setLastRun(new Date(5))
    expect(await store.pipeline('b/slash').getResumeOffset()).toBe(1)
    expect(await store.pipeline('é c').getLastRun()).toEqual(new Date(5))
    // `b` is a prefix of `b/slash`'s name but must not see its state.
    expect(await store.pipeline('b').getResumeOffset()).toBeUndefined()
    expect(await store.pipeline('b').listSchemas()).toEqual([])
  })

  it('keeps workspaces apart in one data dir', async () => {
    const dataDir = await tempDataDir()
    const one = await open({ dataDir, workspace: 'one' })
    const two = await open({ dataDir, workspace: 'two' })
    await one.pipeline('p').saveResumeOffset({ at: 1 })
    expect(await two.pipeline('p').getResumeOffset()).toBeUndefined()
    expect(await one.pipeline('p').getResumeOffset()).toEqual({ at: 1 })
  })

  it('persists every kind of state across close and reopen', async () => {
    const dataDir = await tempDataDir()
    const first = await openStateStore({ dataDir })
    const p = first.pipeline('bikehire')
    await p.saveResumeOffset({ file: 'a.csv', line: 42 })
    await p.setEnabled(false)
    await p.setLastRun(new Date('2026-01-02T03:04:05.678Z'))
    await p.saveSchema('rentals', { fields: ['rental_id'] })
    await first.close()

    const again = (await open({ dataDir })).pipeline('bikehire')
    expect(await again.getResumeOffset()).toEqual({ file: 'a.csv', line: 42 })
    expect(await again.isEnabled()).toBe(false)
    expect(await again.getLastRun()).toEqual(new Date('2026-01-02T03:04:05.678Z'))
    expect((await again.getSchema('rentals'))?.schema).toEqual({ fields: ['rental_id'] })
  })
})

describe('PipelineState', () => {
  it('starts empty: no offset, enabled, never run', async () => {
    const p = (await open()).pipeline('p')
    expect(await p.getResumeOffset()).toBeUndefined()
    expect(await p.isEnabled()).toBe(true)
    expect(await p.getLastRun()).toBeUndefined()
    expect(await p.listSchemas()).toEqual([])
    expect(await p.getLeaseInfo()).toBeUndefined()
  })

  it('saves the resume position as any JSON value', async () => {
    const p = (await open()).pipeline('p')
    for (const offset of [0, 'lsn/16B3748', [1, 2], { tables: { orders: 10 } }, null]) {
      await p.saveResumeOffset(offset)
      expect(await p.getResumeOffset()).toEqual(offset)
    }
  })

  it('toggles the enabled flag', async () => {
    const p = (await open()).pipeline('p')
    await p.setEnabled(false)
    expect(await p.isEnabled()).toBe(false)
    await p.setEnabled(true)
    expect(await p.isEnabled()).toBe(true)
  })

  it('reset forgets the resume position and keeps schemas, flags and last run', async () => {
    const store = await open()
    const p = store.pipeline('p')
    await p.saveResumeOffset({ line: 10 })
    await p.saveSchema('ns', { a: 1 })
    await p.setEnabled(false)
    await p.setLastRun(new Date(1_000))
    await p.reset()
    expect(await p.getResumeOffset()).toBeUndefined()
    expect((await p.getSchema('ns'))?.version).toBe(1)
    expect(await p.isEnabled()).toBe(false)
    expect(await p.getLastRun()).toEqual(new Date(1_000))
    await p.saveResumeOffset({ line: 1 })
    expect(await p.getResumeOffset()).toEqual({ line: 1 })
  })

  it('drop deletes everything of that pipeline only, and fencing tokens do not start over', async () => {
    const store = await open()
    const p = store.pipeline('p')
    const other = store.pipeline('p2')
    const first = await p.acquireLease({ owner: 'a', heartbeatIntervalMs: 0 })
    await p.saveResumeOffset({ line: 10 }, { fence: first.token })
    await p.saveSchema('ns', { a: 1 })
    await p.setEnabled(false)
    await p.setLastRun()
    await first.release()
    await other.saveResumeOffset('kept')

    await p.drop()
    expect(await p.getResumeOffset()).toBeUndefined()
    expect(await p.listSchemas()).toEqual([])
    expect(await p.isEnabled()).toBe(true)
    expect(await p.getLastRun()).toBeUndefined()
    expect(await store.backend.list('default/pipelines/p/')).toEqual([])
    expect(await other.getResumeOffset()).toBe('kept')

    const next = await p.acquireLease({ owner: 'b', heartbeatIntervalMs: 0 })
    expect(next.token).toBeGreaterThan(first.token)
    await next.release()
  })
})
