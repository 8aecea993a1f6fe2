/**
 * The in-sync set shrinks and grows with real peer processes: a peer paused with SIGSTOP is removed
 * after the lag limit and commits go on without it; back, it catches up and is added again; with both
 * peers gone no commit returns, and the last member stays in the set.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { InSyncSet, inSyncKey, WAL_CLUSTER_NO_PEER } from '../src/index.js'
import { type Child, runPeer } from './child.js'
import { openLeader, payload, removeTempDirs, stateStore, tempDir } from './support.js'

const children: Child[] = []
afterEach(async () => {
  for (const child of children) child.process.kill('SIGCONT')
  await Promise.all(children.splice(0).map((child) => child.kill()))
  await removeTempDirs()
})

async function twoPeers() {
  const b = await runPeer(await tempDir())
  const c = await runPeer(await tempDir())
  children.push(b.child, c.child)
  return {
    b: b.child,
    c: c.child,
    peers: [
      { nodeId: 'b', url: `ws://127.0.0.1:${b.port}` },
      { nodeId: 'c', url: `ws://127.0.0.1:${c.port}` },
    ],
  }
}

describe('clustered WAL in-sync set', () => {
  it('drops a paused peer after the lag limit and goes on; adds it back once it caught up', async () => {
    const { b, peers } = await twoPeers()
    const inSync = await stateStore()
    const members = async () => (await InSyncSet.read(inSync, inSyncKey('p')))?.record.members
    // A lag limit no loaded machine reaches by itself: only the paused peer is dropped.
    const lagLimitMs = 3000
    const log = await openLeader('p', await tempDir(), peers, {
      inSync,
      lagLimitMs,
      commitTimeoutMs: 20_000,
    })
    try {
      for (let i = 0; i < 3; i++) await log.append(payload(i))
      // A peer joins the set once it holds every frame: on a loaded machine one may come later.
      while ((await members())?.length !== 2) await sleep(20)
      expect([...((await members()) ?? [])].sort()).toEqual(['b', 'c'])
      b.process.kill('SIGSTOP')
      const started = Date.now()
      await log.append(payload(3))
      // The commit waited for B up to the lag limit, then went on without it.
      expect(Date.now() - started).toBeGreaterThanOrEqual(lagLimitMs - 50)
      expect(await members()).toEqual(['c'])
      for (let i = 4; i < 10; i++) expect(await log.append(payload(i))).toBe(BigInt(i + 1))
      b.process.kill('SIGCONT')
      while (!(await members())?.includes('b')) await sleep(20)
      expect(await log.append(payload(10))).toBe(11n)
    } finally {
      await log.close()
    }
  })

  it('with both peers gone no commit returns, and the last member stays in the set', async () => {
    const { b, c, peers } = await twoPeers()
    const inSync = await stateStore()
    const log = await openLeader('p', await tempDir(), peers, {
      inSync,
      lagLimitMs: 200,
      commitTimeoutMs: 2000,
    })
    try {
      for (let i = 0; i < 3; i++) await log.append(payload(i))
      await b.kill()
      await c.kill()
      const results = await Promise.allSettled([0, 1, 2].map((i) => log.append(payload(10 + i))))
      for (const result of results)
        expect(result).toMatchObject({ status: 'rejected', reason: { code: WAL_CLUSTER_NO_PEER } })
      const record = (await InSyncSet.read(inSync, inSyncKey('p')))?.record
      expect(record?.members).toHaveLength(1)
    } finally {
      await log.close()
    }
  })
})
