import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { LmdbBackend, STATE_OPEN_FAILED, type StateBackend } from '../src/index.js'
import { Child, tempDataDir } from './helpers.js'

const opened: StateBackend[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((backend) => backend.close()))
})

async function openBackend(dir?: string): Promise<LmdbBackend> {
  const backend = LmdbBackend.open(dir ?? (await tempDataDir()))
  opened.push(backend)
  return backend
}

describe('LmdbBackend', () => {
  // The StateBackend contract runs against it in @skippr/conformance.

  it('keeps written values across close and reopen', async () => {
    const dir = await tempDataDir()
    const first = LmdbBackend.open(dir)
    await first.put('k', { kept: true })
    await first.close()
    const again = await openBackend(dir)
    expect((await again.get('k'))?.value).toEqual({ kept: true })
  })

  it('sees another process’s writes at once, even without yielding to timers', async () => {
    const dataDir = await tempDataDir()
    const backend = await openBackend(path.join(dataDir, 'state'))
    const child = new Child(['holder', dataDir, 'p', 'other', '60000', '0'])
    // Awaiting only microtasks: lmdb-js would keep serving its first snapshot unless each read renews it.
    const deadline = Date.now() + 15_000
    let lease = await backend.get('test/leases/p')
    while (lease === undefined && Date.now() < deadline) lease = await backend.get('test/leases/p')
    expect(lease?.value).toMatchObject({ owner: 'other', token: '1', released: false })
    await child.next('acquired')
  })

  it('fails to open with a coded error when the directory cannot be used', async () => {
    const dir = await tempDataDir()
    await mkdir(dir, { recursive: true })
    await writeFile(path.join(dir, 'not-a-dir'), '')
    expect(() => LmdbBackend.open(path.join(dir, 'not-a-dir'))).toThrow(
      expect.objectContaining({ code: STATE_OPEN_FAILED }),
    )
  })
})
