import { expect, it } from 'vitest'
import type { StateBackend } from '../src/index.js'

/** What every `StateBackend` must do; run against each implementation. */
export function backendContract(open: () => Promise<StateBackend>): void {
  it('gets what was put, with a version that changes on every write', async () => {
    const backend = await open()
    expect(await backend.get('a')).toBeUndefined()
    const first = await backend.put('a', { n: 1 })
    const second = await backend.put('a', { n: 2 })
    expect(first.ok && second.ok).toBe(true)
    const entry = await backend.get('a')
    expect(entry?.value).toEqual({ n: 2 })
    expect(second.ok && entry?.version).toBe(second.ok && second.version)
    expect(first.ok && second.ok && first.version !== second.version).toBe(true)
  })

  it('puts with mustNotExist only when the key is absent, and reports what it found', async () => {
    const backend = await open()
    expect((await backend.put('k', 'first', { mustNotExist: true })).ok).toBe(true)
    const refused = await backend.put('k', 'second', { mustNotExist: true })
    expect(refused).toMatchObject({ ok: false, current: { value: 'first' } })
    expect((await backend.get('k'))?.value).toBe('first')
  })

  it('puts with expectedVersion only when the version matches', async () => {
    const backend = await open()
    const created = await backend.put('k', 1)
    if (!created.ok) throw new Error('unconditional put refused')
    expect((await backend.put('k', 2, { expectedVersion: created.version })).ok).toBe(true)
    const stale = await backend.put('k', 3, { expectedVersion: created.version })
    expect(stale).toMatchObject({ ok: false, current: { value: 2 } })
    expect((await backend.put('absent', 1, { expectedVersion: created.version })).ok).toBe(false)
  })

  it('deletes, saying whether the key existed', async () => {
    const backend = await open()
    await backend.put('k', true)
    expect(await backend.delete('k')).toBe(true)
    expect(await backend.delete('k')).toBe(false)
    expect(await backend.get('k')).toBeUndefined()
  })

  it('lists exactly the keys with a prefix, in key order', async () => {
    const backend = await open()
    for (const key of ['p/b', 'p/a', 'p', 'q/a', 'o/z', 'p/a/deep']) await backend.put(key, key)
    const listed = await backend.list('p/')
    expect(listed.map((item) => item.key)).toEqual(['p/a', 'p/a/deep', 'p/b'])
    expect(listed.map((item) => item.value)).toEqual(['p/a', 'p/a/deep', 'p/b'])
    expect(await backend.list('none/')).toEqual([])
  })

  it('round-trips JSON values unchanged', async () => {
    const backend = await open()
    const value = {
      s: 'é\u0000"\n',
      n: -1.5e300,
      i: 2 ** 53 - 1,
      b: false,
      z: null,
      a: [1, [2, {}]],
      o: { '': 'x' },
    }
    await backend.put('json', value)
    expect((await backend.get('json'))?.value).toEqual(value)
  })
}
