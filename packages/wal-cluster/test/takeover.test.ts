/**
 * Takeover with real processes: a leader SIGKILLed right after commits returned is replaced by a member
 * of the in-sync set, whose log holds every returned FSN with the leader's bytes, and which continues
 * after it; the old leader, back as a peer, drops its divergent tail. Two members promoted at once: one
 * wins. A zombie leader can neither write the set nor commit. A peer outside the set is not electable.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { diskWal } from '@skippr/wal'
import { afterEach, describe, expect, it } from 'vitest'
import {
  clusteredWal,
  InSyncSet,
  inSyncKey,
  readPeerCopy,
  WAL_CLUSTER_FENCED,
  WAL_CLUSTER_NOT_ELECTABLE,
  WAL_CLUSTER_REFUSED,
} from '../src/index.js'
import { type Child, runFixture, runPeer } from './child.js'
import {
  byFsn,
  openLeader,
  payload,
  readAll,
  removeTempDirs,
  SECRET,
  startPeer,
  stateStore,
  tempDir,
} from './support.js'

const children: Child[] = []
afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => child.kill()))
  await removeTempDirs()
})

async function peerProcess(dataDir: string, port = 0): Promise<{ child: Child; port: number }> {
  const peer = await runPeer(dataDir, port)
  children.push(peer.child)
  return peer
}

async function members(stateDir: string): Promise<readonly string[] | undefined> {
  return (await InSyncSet.read(await stateStore(stateDir), inSyncKey('p')))?.record.members
}

async function until(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await sleep(20)
  }
}

describe('clustered WAL takeover', () => {
  it('a member promoted after the leader was SIGKILLed holds every returned FSN with its bytes', async () => {
    const [aDir, bDir, cDir, stateDir] = [await tempDir(), await tempDir(), await tempDir(), await tempDir()]
    const b = await peerProcess(bDir)
    const c = await peerProcess(cDir)
    const leader = runFixture('leader.ts', [
      aDir,
      'p',
      stateDir,
      'a',
      '1',
      '60000',
      `b=ws://127.0.0.1:${b.port}`,
      `c=ws://127.0.0.1:${c.port}`,
    ])
    children.push(leader)
    await leader.printed((line) => line === 'committed 10')
    await until(async () => (await members(stateDir))?.length === 2, 'both peers are members')
    // C stalls (a slow disk, a paused host) while the leader goes on: no commit may return without it.
    c.child.process.kill('SIGSTOP')
    await sleep(500)
    await leader.kill()
    await b.child.kill()
    c.child.process.kill('SIGCONT')
    await c.child.kill()
    const returned = leader
      .lines()
      .flatMap((line) => (line.startsWith('committed ') ? [BigInt(line.slice(10))] : []))
    const mine = byFsn(
      await readAll(
        (await (await diskWal.openSnapshot({ pipeline: 'p', dataDir: aDir })).openLog()).frames(),
      ),
    )

    // C takes over with the next lease token; B comes back as its peer, A as a peer too.
    await peerProcess(bDir, b.port)
    const aPeer = await peerProcess(aDir)
    const store = await stateStore(stateDir)
    const promoted = await openLeader(
      'p',
      cDir,
      [
        { nodeId: 'b', url: `ws://127.0.0.1:${b.port}` },
        { nodeId: 'a', url: `ws://127.0.0.1:${aPeer.port}` },
      ],
      { nodeId: 'c', fencingToken: 2n, inSync: store },
    )
    try {
      const copy = byFsn(await readAll(promoted.read(1n)))
      for (const fsn of returned) expect(copy.get(fsn), `FSN ${fsn}`).toBe(mine.get(fsn))
      const last = promoted.publishedFsn
      expect(last).toBeGreaterThanOrEqual(returned.at(-1)!)
      // It continues after the copy's last frame; A's frames after it (never on a member) are dropped.
      const more = []
      for (let i = 0; i < 4; i++) more.push(await promoted.append(payload(500 + i)))
      expect(more).toEqual([last + 1n, last + 2n, last + 3n, last + 4n])
      const log = byFsn(await readAll(promoted.read(1n)))
      await until(async () => {
        const a = byFsn(await readPeerCopy(aDir, 'p'))
        return a.size === log.size && [...log].every(([fsn, bytes]) => a.get(fsn) === bytes)
      }, 'the old leader’s copy is the new leader’s log')
      expect((await InSyncSet.read(store, inSyncKey('p')))?.record).toMatchObject({ token: 2n, leader: 'c' })
    } finally {
      await promoted.close()
    }
  }, 90_000)

  it('two members promoted at once under one token: exactly one wins; the zombie leader is refused', async () => {
    const [bDir, cDir] = [await tempDir(), await tempDir()]
    const b = await startPeer(bDir)
    const c = await startPeer(cDir)
    const inSync = await stateStore()
    const zombie = await openLeader(
      'p',
      await tempDir(),
      [
        { nodeId: 'b', url: b.url },
        { nodeId: 'c', url: c.url },
      ],
      { nodeId: 'a', inSync, lagLimitMs: 200, commitTimeoutMs: 10_000 },
    )
    for (let i = 0; i < 5; i++) await zombie.append(payload(i))
    const [bUrl, cUrl] = [b.url, c.url]
    await b.close()
    await c.close()
    const promote = (nodeId: string, dataDir: string, peer: string) =>
      openLeader('p', dataDir, [{ nodeId: nodeId === 'b' ? 'c' : 'b', url: peer }], {
        nodeId,
        fencingToken: 2n,
        inSync,
        commitTimeoutMs: 10_000,
      })
    // Each would-be leader's peer is the other's copy: the loser's is served again once it lost.
    const claims = { b: promote('b', bDir, cUrl), c: promote('c', cDir, bUrl) }
    const lost = await Promise.race(
      (['b', 'c'] as const).map((id) =>
        claims[id].then(
          () => undefined,
          (e: unknown) => ({ id, e }),
        ),
      ),
    )
    expect(lost?.e).toMatchObject({ code: WAL_CLUSTER_FENCED })
    const winner = lost!.id === 'b' ? 'c' : 'b'
    const loser = lost!.id
    const loserPeer = await startPeer(
      loser === 'b' ? bDir : cDir,
      Number(new URL(loser === 'b' ? bUrl : cUrl).port),
    )
    const promoted = await claims[winner]
    expect(promoted.publishedFsn).toBe(5n)
    await promoted.close()
    expect((await InSyncSet.read(inSync, inSyncKey('p')))?.record).toEqual({
      token: 2n,
      leader: winner,
      members: [loser],
    })

    // The zombie wakes up: the loser's copy, back, refuses its token; the winner's copy is not served
    // (it is a leader's log now). Waiting for the winner, it tries to drop it from the set: refused.
    const error = await zombie.append(payload(9)).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: WAL_CLUSTER_FENCED })
    expect((error as Error).message).toContain(`node ${winner} holds it with fencing token 2`)
    await expect(zombie.append(payload(10))).rejects.toMatchObject({ code: WAL_CLUSTER_FENCED })
    expect((await InSyncSet.read(inSync, inSyncKey('p')))?.record.members).toEqual([loser])
    await zombie.close()
    await loserPeer.close()
  }, 60_000)

  it('a peer outside the in-sync set is not electable', async () => {
    const b = await startPeer(await tempDir())
    const cDir = await tempDir()
    const down = await startPeer(cDir)
    const cUrl = down.url
    await down.close()
    const inSync = await stateStore()
    const leader = await openLeader(
      'p',
      await tempDir(),
      [
        { nodeId: 'b', url: b.url },
        { nodeId: 'c', url: cUrl },
      ],
      { nodeId: 'a', inSync },
    )
    for (let i = 0; i < 3; i++) await leader.append(payload(i))
    await leader.close()
    const error = await openLeader('p', cDir, [{ nodeId: 'b', url: b.url }], {
      nodeId: 'c',
      fencingToken: 2n,
      inSync,
    }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: WAL_CLUSTER_NOT_ELECTABLE })
    expect((await InSyncSet.read(inSync, inSyncKey('p')))?.record).toEqual({
      token: 1n,
      leader: 'a',
      members: ['b'],
    })
    await b.close()
  })

  it('a member whose copy starts after landed frames continues the log at the leader’s FSNs', async () => {
    const b = await startPeer(await tempDir())
    const cDir = await tempDir()
    let c = await startPeer(cDir)
    const cPort = c.port
    await c.close()
    const inSync = await stateStore()
    const peers = [
      { nodeId: 'b', url: b.url },
      { nodeId: 'c', url: `ws://127.0.0.1:${cPort}` },
    ]
    const aDir = await tempDir()
    const leader = await openLeader('p', aDir, peers, { nodeId: 'a', inSync })
    for (let i = 0; i < 10; i++) await leader.append(payload(i))
    await leader.ack(6n)
    c = await startPeer(cDir, cPort)
    await until(
      async () => (await InSyncSet.read(inSync, inSyncKey('p')))?.record.members.includes('c') === true,
      'C is a member',
    )
    const frames = byFsn(await readAll(leader.read(7n)))
    await leader.close()
    await c.close()
    const options = { nodeId: 'c', fencingToken: 2n, inSync }
    const toB = [{ nodeId: 'b', url: b.url }]
    const promoted = await openLeader('p', cDir, toB, options)
    try {
      expect(byFsn(await readAll(promoted.read(1n)))).toEqual(frames)
      expect(await promoted.append(payload(10))).toBe(11n)
      const view = await clusteredWal({ ...options, peers: toB, secret: SECRET }).openSnapshot({
        pipeline: 'p',
        dataDir: cDir,
      })
      const seen = await readAll((await view.openLog()).frames())
      expect(seen.map((f) => f.fsn)).toEqual([7n, 8n, 9n, 10n, 11n])
    } finally {
      await promoted.close()
      await b.close()
    }
    // C's directory, served as a peer's copy again, refuses the old leader (with a set of its own).
    c = await startPeer(cDir, cPort)
    const old = openLeader('p', aDir, [{ nodeId: 'c', url: c.url }], { nodeId: 'a', fencingToken: 1n })
    await expect(old).rejects.toMatchObject({ code: WAL_CLUSTER_REFUSED })
    await c.close()
  })
})
