import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { listOrphanSlots } from '../src/orphans.js'
import { openSlot } from '../src/slot.js'
import { payload, tmpSfDir } from './support/helpers.js'

describe('listOrphanSlots', () => {
  it('lists siblings with at least one .sfa and no .failed, never the own slot', async () => {
    const sfDir = await tmpSfDir()
    for (const id of ['me', 'a', 'b', 'failed', 'empty']) {
      const slot = await openSlot({ sfDir, senderId: id, maxSegmentBytes: 4096, maxTotalBytes: 8 * 4096 })
      if (id !== 'empty') await slot.append(payload(1))
      if (id === 'failed') await slot.markFailed('reconnect budget exhausted')
      await slot.close()
    }
    await writeFile(path.join(sfDir, 'not-a-dir'), 'x')
    await mkdir(path.join(sfDir, 'tmp-only'))
    await writeFile(path.join(sfDir, 'tmp-only', 'sf-0000000000000001.sfa.tmp'), '')
    expect(await listOrphanSlots(sfDir, 'me')).toEqual(['a', 'b'])
    // an operator removing .failed makes the slot eligible again
    await rm(path.join(sfDir, 'failed', '.failed'))
    expect(await listOrphanSlots(sfDir, 'me')).toEqual(['a', 'b', 'failed'])
  })

  it('returns [] for a missing sfDir', async () => {
    expect(await listOrphanSlots(path.join(await tmpSfDir(), 'nope'), 'me')).toEqual([])
  })
})
