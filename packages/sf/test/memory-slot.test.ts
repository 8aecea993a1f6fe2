import { describe, expect, it } from 'vitest'
import { openMemorySlot } from '../src/memory-slot.js'
import { collect, payload } from './support/helpers.js'

describe('openMemorySlot', () => {
  it('has the slot API: FSNs from 1, replay from an FSN, cumulative ack', async () => {
    const slot = openMemorySlot()
    const fsns = await Promise.all([1, 2, 3, 4].map((i) => slot.append(payload(i))))
    expect(fsns).toEqual([1n, 2n, 3n, 4n])
    expect((await collect(slot.replay(3n))).map((f) => f.fsn)).toEqual([3n, 4n])
    await slot.ack(2n)
    expect(slot.ackedFsn).toBe(2n)
    expect((await collect(slot.replay())).map((f) => Buffer.from(f.payload))).toEqual([
      payload(3),
      payload(4),
    ])
    await expect(slot.ack(9n)).rejects.toMatchObject({ code: 'SF_ACK_OUT_OF_RANGE' })
    await slot.close()
  })

  it('copies payloads, so a caller reusing its buffer cannot change a stored frame', async () => {
    const slot = openMemorySlot()
    const buf = Buffer.from('abc')
    await slot.append(buf)
    buf.write('xyz')
    const [frame] = await collect(slot.replay())
    expect(Buffer.from(frame!.payload).toString()).toBe('abc')
  })

  it('caps unacked bytes at maxTotalBytes (payload + 8 per frame), default 128 MiB', async () => {
    expect(openMemorySlot().stats().maxTotalBytes).toBe(128 * 1024 * 1024)
    const slot = openMemorySlot({ maxTotalBytes: 3 * 108, appendDeadlineMs: 2000 })
    for (let i = 0; i < 3; i++) await slot.append(payload(i, 100))
    await expect(slot.append(payload(3, 100))).rejects.toMatchObject({ code: 'SF_BACKPRESSURE' })
    const blocked = slot.appendBlocking(payload(3, 100))
    await slot.ack(1n)
    expect(await blocked).toBe(4n)
    expect(slot.stats()).toMatchObject({
      totalBytes: 3 * 108,
      backpressureStalls: 2,
      segments: 0,
      durability: 'none',
    })
  })

  it('replays long slots after many acks (compaction keeps FSNs right)', async () => {
    const slot = openMemorySlot()
    for (let i = 1; i <= 5000; i++) await slot.append(payload(i, 8))
    await slot.ack(4990n)
    const frames = await collect(slot.replay())
    expect(frames.map((f) => f.fsn)).toEqual([
      4991n,
      4992n,
      4993n,
      4994n,
      4995n,
      4996n,
      4997n,
      4998n,
      4999n,
      5000n,
    ])
    expect(Buffer.from(frames[0]!.payload)).toEqual(payload(4991, 8))
  })
})
