import { open, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Fingerprint } from '../src/fingerprint.js'
import { tempDir } from './helpers.js'

async function fingerprintOf(path: string, pos: number): Promise<string> {
  const file = await open(path, 'r')
  try {
    return (await Fingerprint.of(file, pos)).digest()
  } finally {
    await file.close()
  }
}

describe('Fingerprint', () => {
  it('built while reading equals the one read back from the file, and ignores appends', async () => {
    const dir = await tempDir()
    const path = join(dir, 'f')
    const content = Buffer.from(
      Array.from({ length: 5000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join(''),
    )
    await writeFile(path, content)
    for (const pos of [0, 10, 1024, 1500, 4999]) {
      const built = Fingerprint.empty()
      for (let at = 0; at < pos; at += 333) built.advance(content.subarray(at, Math.min(pos, at + 333)))
      expect(await fingerprintOf(path, pos)).toBe(built.digest())
    }
    const before = await fingerprintOf(path, 3000)
    await writeFile(path, Buffer.concat([content, Buffer.from('more')]))
    expect(await fingerprintOf(path, 3000)).toBe(before)
  })

  it('changes when the first kilobyte or the kilobyte before the position changes', async () => {
    const dir = await tempDir()
    const path = join(dir, 'f')
    const content = Buffer.alloc(4000, 120)
    await writeFile(path, content)
    const original = await fingerprintOf(path, 4000)
    for (const at of [0, 1023, 2999, 3999]) {
      const changed = Buffer.from(content)
      changed[at] = 121
      await writeFile(path, changed)
      expect(await fingerprintOf(path, 4000)).not.toBe(original)
    }
  })
})
