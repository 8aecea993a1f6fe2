/**
 * The in-sync set record in a real state store (@skippr/state's LMDB backend): who may claim it, and that
 * every write is conditional, so a zombie leader's write and the loser of two claims fail.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { InSyncSet, WAL_CLUSTER_FENCED, WAL_CLUSTER_NOT_ELECTABLE } from '../src/index.js'
import { removeTempDirs, stateStore } from './support.js'

afterEach(removeTempDirs)

const KEY = 'wal-cluster/p/in-sync'

async function recordOf(store: Awaited<ReturnType<typeof stateStore>>) {
  return (await InSyncSet.read(store, KEY))?.record
}

describe('in-sync set', () => {
  it('a new set has the leader and no members; the leader adds and removes members', async () => {
    const store = await stateStore()
    const set = await InSyncSet.claim(store, KEY, 'a', 1n)
    expect(await recordOf(store)).toEqual({ token: 1n, leader: 'a', members: [] })
    await set.add('b')
    await set.add('c')
    await set.remove('b')
    expect(await recordOf(store)).toEqual({ token: 1n, leader: 'a', members: ['c'] })
    // The same leader again under a newer lease keeps the members.
    await InSyncSet.claim(store, KEY, 'a', 4n)
    expect(await recordOf(store)).toEqual({ token: 4n, leader: 'a', members: ['c'] })
  })

  it('a member takes the set over with a newer token; the old leader’s writes are refused', async () => {
    const store = await stateStore()
    const zombie = await InSyncSet.claim(store, KEY, 'a', 1n)
    await zombie.add('b')
    await zombie.add('c')
    await InSyncSet.claim(store, KEY, 'b', 2n)
    expect(await recordOf(store)).toEqual({ token: 2n, leader: 'b', members: ['c'] })
    const error = await zombie.remove('c').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: WAL_CLUSTER_FENCED })
    expect((error as Error).message).toContain('node b holds it with fencing token 2')
    await expect(InSyncSet.claim(store, KEY, 'a', 1n)).rejects.toMatchObject({ code: WAL_CLUSTER_FENCED })
    expect(await recordOf(store)).toEqual({ token: 2n, leader: 'b', members: ['c'] })
  })

  it('a node outside the set cannot claim it, whatever its token', async () => {
    const store = await stateStore()
    const set = await InSyncSet.claim(store, KEY, 'a', 1n)
    await set.add('b')
    const error = await InSyncSet.claim(store, KEY, 'c', 9n).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: WAL_CLUSTER_NOT_ELECTABLE })
    expect((error as Error).message).toContain('node c is not in the in-sync set')
    expect(await recordOf(store)).toEqual({ token: 1n, leader: 'a', members: ['b'] })
  })

  it('of two members claiming the set at once under one lease token, exactly one wins', async () => {
    for (let round = 0; round < 20; round++) {
      const store = await stateStore()
      const set = await InSyncSet.claim(store, KEY, 'a', 1n)
      await set.add('b')
      await set.add('c')
      const claims = await Promise.allSettled([
        InSyncSet.claim(store, KEY, 'b', 2n),
        InSyncSet.claim(store, KEY, 'c', 2n),
      ])
      const won = claims.flatMap((claim, i) => (claim.status === 'fulfilled' ? [['b', 'c'][i]] : []))
      expect(won).toHaveLength(1)
      for (const claim of claims)
        if (claim.status === 'rejected') expect(claim.reason).toMatchObject({ code: WAL_CLUSTER_FENCED })
      expect((await recordOf(store))?.leader).toBe(won[0])
    }
  })
})
