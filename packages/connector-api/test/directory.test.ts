import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { makeDirectory, makeDirectorySync } from '../src/index.js'

describe('makeDirectory', () => {
  it('makes the missing levels and returns the first it made; an existing directory is fine', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'skippr-dir-'))
    try {
      const deep = path.join(root, 'a', 'b', 'c')
      expect(await makeDirectory(deep)).toBe(path.join(root, 'a'))
      expect((await stat(deep)).isDirectory()).toBe(true)
      expect(await makeDirectory(deep)).toBeUndefined()
      await writeFile(path.join(root, 'file'), '')
      await expect(makeDirectory(path.join(root, 'file'))).rejects.toMatchObject({ code: 'EEXIST' })
      await expect(makeDirectory(path.join(root, 'file', 'below'))).rejects.toMatchObject({ code: 'ENOTDIR' })
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })

  it.runIf(process.platform === 'linux')(
    'fails fast under /proc, where recursive mkdir never returns',
    async () => {
      await expect(makeDirectory('/proc/skippr-test/warehouse')).rejects.toMatchObject({ code: 'ENOENT' })
      expect(() => makeDirectorySync('/proc/state')).toThrow(expect.objectContaining({ code: 'ENOENT' }))
    },
  )
})
