/**
 * openSlotSnapshot: a lock-free reader of a slot another process owns. (The query work added it;
 * @skippr/wal's snapshot-reader test drives it against a live writer that trims.)
 */
import * as fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeFs, openSlot, openSlotSnapshot, type Slot, type SlotFs } from '../src/index.js'

let sfDir: string
let slot: Slot | undefined
beforeEach(async () => {
  sfDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'skippr-sf-snap-'))
})
afterEach(async () => {
  await slot?.close()
  slot = undefined
  await fsp.rm(sfDir, { recursive: true, force: true })
})

/** A slot (held open, as a writer would) with `count` frames `f1`, `f2`, … in 512-byte segments. */
async function writer(count: number): Promise<Slot> {
  slot = await openSlot({ sfDir, senderId: 's', maxSegmentBytes: 512, maxTotalBytes: 1 << 20 })
  for (let i = 1; i <= count; i++) await slot.append(Buffer.from(`f${i}`.padEnd(40, '.')))
  return slot
}

async function read(options: { fromFsn?: bigint; io?: SlotFs } = {}): Promise<string[]> {
  const snapshot = await openSlotSnapshot({ sfDir, senderId: 's', ...(options.io && { io: options.io }) })
  const out: string[] = []
  for await (const frame of snapshot.frames(options.fromFsn))
    out.push(`${frame.fsn}:${Buffer.from(frame.payload).toString().split('.')[0]}`)
  return out
}

const expected = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${from + i}:f${from + i}`)

describe('openSlotSnapshot', () => {
  it('reads the unacked frames of a slot another handle holds, across segments, without its lock', async () => {
    const s = await writer(30)
    expect(await read()).toEqual(expected(1, 30))
    await s.ack(12n)
    expect(await read()).toEqual(expected(13, 30))
    // From an FSN: the frames before it are stepped over by their lengths.
    expect(await read({ fromFsn: 25n })).toEqual(expected(25, 30))
    expect(await read({ fromFsn: 5n })).toEqual(expected(13, 30))
    await s.append(Buffer.from('f31'))
    expect((await read()).at(-1)).toBe('31:f31')
  })

  it('never returns a trimmed segment reused for new frames under its old FSNs', async () => {
    const s = await writer(30)
    const snapshot = await openSlotSnapshot({ sfDir, senderId: 's' })
    // Everything the snapshot holds open is acked and trimmed, and the files are reused for new frames.
    await s.ack(30n)
    for (let i = 31; i <= 60; i++) await s.append(Buffer.from(`g${i}`.padEnd(40, '.')))
    const seen: string[] = []
    for await (const frame of snapshot.frames())
      seen.push(`${frame.fsn}:${Buffer.from(frame.payload).toString().split('.')[0]}`)
    // Whatever prefix it still returns is the old frames' own bytes.
    expect(seen).toEqual(expected(1, seen.length))
    expect(await read()).toEqual(Array.from({ length: 30 }, (_, i) => `${31 + i}:g${31 + i}`))
  })

  it('goes on after the watermark when a file it holds is trimmed and reused while it reads', async () => {
    const s = await writer(30) // 10 frames to a segment: 1–10, 11–20, 21–30
    const snapshot = await openSlotSnapshot({ sfDir, senderId: 's' })
    expect(snapshot.ackedFsn).toBe(0n)
    // The first two segments are acked and trimmed, and their files reused for new frames.
    await s.ack(20n)
    for (let i = 31; i <= 50; i++) await s.append(Buffer.from(`g${i}`.padEnd(40, '.')))
    const seen: string[] = []
    for await (const frame of snapshot.frames())
      seen.push(`${frame.fsn}:${Buffer.from(frame.payload).toString().split('.')[0]}`)
    // The frames after the watermark it finds, up to the last one that existed when it opened.
    expect(seen).toEqual(expected(21, 30))
    expect(snapshot.ackedFsn).toBe(20n)
  })

  it('ends at the first frame it cannot read whole: the rest is not a prefix', async () => {
    const s = await writer(30)
    await s.close()
    slot = undefined
    const dir = path.join(sfDir, 's')
    const segments = (await fsp.readdir(dir)).filter((n) => n.endsWith('.sfa')).sort()
    // 10 frames of 48 bytes fill each 512-byte segment after its 32-byte header: damage FSN 13.
    const second = path.join(dir, segments[1]!)
    const handle = await fsp.open(second, 'r+')
    await handle.write(Buffer.from('XX'), 0, 2, 32 + 2 * 48 + 10)
    await handle.close()
    expect(await read()).toEqual(expected(1, 12))
  })

  it('lists again when a segment vanishes between listing and opening (trimmed meanwhile)', async () => {
    const s = await writer(30)
    await s.ack(20n)
    let vanished = 0
    const io: SlotFs = {
      ...nodeFs,
      async open(file, mode) {
        if (vanished === 0 && file.endsWith('.sfa')) {
          vanished++
          throw Object.assign(new Error('gone'), { code: 'ENOENT' })
        }
        return nodeFs.open(file, mode)
      },
    }
    expect(await read({ io })).toEqual(expected(21, 30))
    expect(vanished).toBe(1)
  })

  it('is empty for a slot that does not exist', async () => {
    expect(await read()).toEqual([])
  })
})
