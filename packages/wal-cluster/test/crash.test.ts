/**
 * Two copies under crashes, with real processes: a commit waits for a peer that is down; a peer killed
 * at random during appends ends with the leader's frames FSN for FSN; a leader killed at random leaves
 * every FSN whose append returned on the peer, with the leader's bytes.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { diskWal } from '@skippr/wal'
import { afterEach, describe, expect, it } from 'vitest'
import { readPeerCopy, WAL_CLUSTER_NO_PEER } from '../src/index.js'
import { type Child, runFixture, runPeer } from './child.js'
import { byFsn, openLeader, payload, readAll, removeTempDirs, startPeer, tempDir } from './support.js'

const children: Child[] = []
afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => child.kill()))
  await removeTempDirs()
})

async function peerProcess(dataDir: string, port = 0): Promise<number> {
  const peer = await runPeer(dataDir, port)
  children.push(peer.child)
  return peer.port
}

/** The leader's own frames, read through the disk WAL's lock-free view. */
async function leaderFrames(dataDir: string, pipeline: string) {
  return readAll((await (await diskWal.openSnapshot({ pipeline, dataDir })).openLog()).frames())
}

describe('clustered WAL under crashes', () => {
  it('does not return a commit while the only peer is down, and returns it once the peer is back', async () => {
    const peerDir = await tempDir()
    const leaderDir = await tempDir()
    const port = await peerProcess(peerDir)
    const log = await openLeader('p', leaderDir, [`ws://127.0.0.1:${port}`], { commitTimeoutMs: 20_000 })
    try {
      expect(await log.append(payload(1))).toBe(1n)
      await children[0]!.kill()
      let returned: bigint | undefined
      const commit = log.append(payload(2)).then((fsn) => {
        returned = fsn
        return fsn
      })
      await sleep(1500)
      expect(returned).toBeUndefined()
      await peerProcess(peerDir, port)
      expect(await commit).toBe(2n)
      expect(byFsn(await readPeerCopy(peerDir, 'p'))).toEqual(byFsn(await readAll(log.read(1n))))
    } finally {
      await log.close()
    }
  })

  it('fails a commit no peer confirms after the timeout, and takes no more until reopened', async () => {
    const peer = await startPeer(await tempDir())
    const url = peer.url
    await peer.close()
    const log = await openLeader('p', await tempDir(), [url], { commitTimeoutMs: 300 })
    try {
      const error = await log.append(payload(1)).catch((e: unknown) => e)
      expect(error).toMatchObject({ code: WAL_CLUSTER_NO_PEER })
      expect((error as Error).message).toMatch(/the in-sync set did not confirm frame 1 within 300 ms/)
      await expect(log.append(payload(2))).rejects.toMatchObject({ code: WAL_CLUSTER_NO_PEER })
      expect(log.publishedFsn).toBe(1n)
    } finally {
      await log.close()
    }
  })

  it('a peer SIGKILLed at random during appends holds, once back, the leader’s frames FSN for FSN', async () => {
    const peerDir = await tempDir()
    const leaderDir = await tempDir()
    const port = await peerProcess(peerDir)
    const log = await openLeader('p', leaderDir, [`ws://127.0.0.1:${port}`], { commitTimeoutMs: 30_000 })
    try {
      let appending = true
      const appends = (async () => {
        for (let i = 0; i < 40; i++) await Promise.all([0, 1, 2].map((k) => log.append(payload(i * 3 + k))))
        appending = false
      })()
      let kills = 0
      while (appending && kills < 4) {
        await sleep(50 + Math.random() * 400)
        await children.pop()!.kill()
        kills++
        await sleep(Math.random() * 300)
        await peerProcess(peerDir, port)
      }
      await appends
      expect(kills).toBeGreaterThan(0)
      expect(log.publishedFsn).toBe(120n)
      await children.pop()!.kill()
      const copy = byFsn(await readPeerCopy(peerDir, 'p'))
      expect(copy).toEqual(byFsn(await readAll(log.read(1n))))
      expect(copy.size).toBe(120)
    } finally {
      await log.close()
    }
  }, 90_000)

  it('a leader SIGKILLed at random after its local fsync leaves every FSN it returned on the peer', async () => {
    const peerDir = await tempDir()
    const leaderDir = await tempDir()
    const stateDir = await tempDir()
    const peer = await startPeer(peerDir)
    try {
      const returned = new Set<bigint>()
      for (let round = 0; round < 3; round++) {
        const leader = runFixture('leader.ts', [leaderDir, 'p', stateDir, 'a', '1', '10000', `b=${peer.url}`])
        children.push(leader)
        await leader.printed((line) => line === 'open')
        const after = returned.size + 5 + Math.floor(Math.random() * 30)
        await leader.printed((line) => line === `committed ${after}`)
        await sleep(Math.random() * 50)
        await children.pop()!.kill()
        for (const line of leader.lines())
          if (line.startsWith('committed ')) returned.add(BigInt(line.split(' ')[1]!))
      }
      const copy = byFsn(await readPeerCopy(peerDir, 'p'))
      const mine = byFsn(await leaderFrames(leaderDir, 'p'))
      for (const fsn of returned) {
        expect(copy.get(fsn), `FSN ${fsn}`).toBeDefined()
        expect(copy.get(fsn), `FSN ${fsn}`).toBe(mine.get(fsn))
      }
      // No FSN with two payloads: whatever else the peer holds is the leader's frame at that FSN.
      for (const [fsn, bytes] of copy) expect(bytes, `FSN ${fsn}`).toBe(mine.get(fsn))
    } finally {
      await peer.close()
    }
  }, 90_000)
})
