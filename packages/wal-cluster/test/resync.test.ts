/**
 * A peer's copy keeps every frame at the leader's FSN: one that joins after frames were landed starts at
 * the leader's oldest unlanded FSN, and a copy of another log generation is dropped and fetched again.
 */
import { cp, rm } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { diskWal } from '@skippr/wal'
import { afterEach, describe, expect, it } from 'vitest'
import { readPeerCopy } from '../src/index.js'
import {
  backendOptions,
  byFsn,
  openLeader,
  payload,
  readAll,
  removeTempDirs,
  startPeer,
  tempDir,
} from './support.js'

afterEach(removeTempDirs)

describe('clustered WAL resync', () => {
  it('a peer joining after frames were landed holds the unlanded ones at the leader’s FSNs', async () => {
    const peerDir = await tempDir()
    let peer = await startPeer(peerDir)
    const log = await openLeader('p', await tempDir(), [peer.url])
    for (let i = 0; i < 30; i++) await log.append(payload(i))
    await log.ack(20n)
    await peer.close()
    await rm(peerDir, { recursive: true, force: true })
    peer = await startPeer(peerDir, peer.port)
    expect(await log.append(payload(30))).toBe(31n)
    const copy = await readPeerCopy(peerDir, 'p')
    expect(copy.map((f) => f.fsn)).toEqual(Array.from({ length: 11 }, (_, i) => BigInt(21 + i)))
    expect(byFsn(copy)).toEqual(byFsn(await readAll(log.read(21n))))
    await log.close()
    await peer.close()
  })

  it('a copy of the log before clear() is dropped, even where the peer had landed it', async () => {
    const peerDir = await tempDir()
    let peer = await startPeer(peerDir)
    const log = await openLeader('p', await tempDir(), [peer.url])
    for (let i = 0; i < 10; i++) await log.append(payload(i))
    await log.ack(10n)
    while ((await readPeerCopy(peerDir, 'p')).length > 0) await sleep(10)
    // The peer is away while the log starts again and gets more frames than it had: only the log's
    // generation tells its landed frames 1…10 from the new ones.
    await peer.close()
    await log.clear()
    const appends = Promise.all(Array.from({ length: 12 }, (_, i) => log.append(payload(100 + i))))
    while (log.publishedFsn < 12n) await sleep(10)
    peer = await startPeer(peerDir, peer.port)
    await appends
    expect(byFsn(await readPeerCopy(peerDir, 'p'))).toEqual(byFsn(await readAll(log.read(1n))))
    await log.close()
    await peer.close()
  })

  it('a copy with other bytes at an FSN the leader has (a divergent tail) is dropped and fetched again', async () => {
    const peerDir = await tempDir()
    const peer = await startPeer(peerDir)
    const aDir = await tempDir()
    const bDir = await tempDir()
    let a = await openLeader('p', aDir, [peer.url])
    for (let i = 0; i < 5; i++) await a.append(payload(i))
    await a.close()
    // B: the same log generation up to FSN 5, then frames of its own, as a leader that took over would.
    await cp(aDir, bDir, { recursive: true })
    a = await openLeader('p', aDir, [peer.url])
    for (let i = 5; i < 8; i++) await a.append(payload(i))
    await a.close()
    // Frames 6…9 of B's own, left in its log as a crash leaves them: opening B waits until the peer holds them.
    const local = await diskWal.open(backendOptions('p', bDir))
    for (let i = 0; i < 4; i++) await local.append(payload(200 + i))
    await local.close()
    const b = await openLeader('p', bDir, [peer.url], { fencingToken: 2n })
    expect(b.publishedFsn).toBe(9n)
    expect(byFsn(await readPeerCopy(peerDir, 'p'))).toEqual(byFsn(await readAll(b.read(1n))))
    await b.close()
    await peer.close()
  })
})
