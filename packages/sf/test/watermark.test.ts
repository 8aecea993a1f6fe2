import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { nodeFs } from '../src/io.js'
import { readWatermark, writeWatermark } from '../src/watermark.js'
import { tmpSfDir } from './support/helpers.js'

describe('.ack-watermark', () => {
  it('is absent until written, then 16 bytes holding the FSN', async () => {
    const dir = await tmpSfDir()
    expect(await readWatermark(nodeFs, dir)).toBeUndefined()
    await writeWatermark(nodeFs, dir, 12345678901n)
    expect(await readWatermark(nodeFs, dir)).toEqual({ fsn: 12345678901n })
    expect((await readFile(path.join(dir, '.ack-watermark'))).length).toBe(16)
    expect(await readdir(dir)).toEqual(['.ack-watermark']) // the temporary file was renamed over it
  })

  it('reports corruption instead of a value', async () => {
    const dir = await tmpSfDir()
    await writeFile(path.join(dir, '.ack-watermark'), Buffer.alloc(16, 7))
    expect(await readWatermark(nodeFs, dir)).toEqual({ corrupt: 'bad magic' })
    await writeFile(path.join(dir, '.ack-watermark'), '')
    expect(await readWatermark(nodeFs, dir)).toEqual({ corrupt: 'expected 16 bytes, found 0' })
  })
})
