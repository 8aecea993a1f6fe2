/**
 * Who a peer takes frames from: never a leader with an older fencing token than one it saw (also after
 * it restarted), never one without the secret; each refusal is one clear line.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { readPeerCopy, WAL_CLUSTER_REFUSED } from '../src/index.js'
import { byFsn, logged, openLeader, payload, readAll, removeTempDirs, startPeer, tempDir } from './support.js'

afterEach(removeTempDirs)

describe('clustered WAL fencing', () => {
  it('refuses a leader with an older fencing token, also after the peer restarted', async () => {
    const peerDir = await tempDir()
    let peer = await startPeer(peerDir)
    const a = await openLeader('p', await tempDir(), [peer.url], { fencingToken: 5n })
    expect(await a.append(payload(1))).toBe(1n)

    const older = await openLeader('p', await tempDir(), [peer.url], { fencingToken: 3n })
    const error = await older.append(payload(2)).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: WAL_CLUSTER_REFUSED })
    expect((error as Error).message).toContain('fencing token 3 is older than 5')
    await older.close()

    await a.close()
    await peer.close()
    peer = await startPeer(peerDir, peer.port)
    const olderAgain = await openLeader('p', await tempDir(), [peer.url], { fencingToken: 3n })
    await expect(olderAgain.append(payload(3))).rejects.toMatchObject({ code: WAL_CLUSTER_REFUSED })
    await olderAgain.close()
    expect(byFsn(await readPeerCopy(peerDir, 'p')).size).toBe(1)
    await peer.close()
  })

  it('takes a newer leader over from an older one, which can commit nothing more', async () => {
    const peerDir = await tempDir()
    const peer = await startPeer(peerDir)
    const old = await openLeader('p', await tempDir(), [peer.url], { fencingToken: 5n })
    await old.append(payload(1))
    const newer = await openLeader('p', await tempDir(), [peer.url], { fencingToken: 7n })
    for (let i = 0; i < 3; i++) await newer.append(payload(10 + i))
    const error = await old.append(payload(2)).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: WAL_CLUSTER_REFUSED })
    expect((error as Error).message).toContain('fencing token 7 took over')
    // The peer's copy is the newer leader's log (another generation: the old one's frame went).
    expect(byFsn(await readPeerCopy(peerDir, 'p'))).toEqual(byFsn(await readAll(newer.read(1n))))
    await old.close()
    await newer.close()
    await peer.close()
  })

  it('refuses a wrong bearer token with one clear line that does not show the secret', async () => {
    const peer = await startPeer(await tempDir())
    const log = await openLeader('p', await tempDir(), [peer.url], { secret: 'not-the-secret' })
    const error = await log.append(payload(1)).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: WAL_CLUSTER_REFUSED })
    const message = (error as Error).message
    expect(message).toBe(
      `clustered WAL of pipeline p: every peer refused it (${peer.url}: refused: the bearer token is not this peer’s secret)`,
    )
    expect(message).not.toContain('not-the-secret')
    expect(logged().filter((line) => line.includes('bearer token')).length).toBeGreaterThan(0)
    await log.close()
    await peer.close()
  })
})
