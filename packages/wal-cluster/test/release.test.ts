/**
 * A peer that releases a pipeline (its node took the writer lease) stops keeping that copy: its old
 * leader is cut off and refused on reconnect, and the node opens the copy as the leader's log in the
 * same process, the peer still running for other pipelines.
 */
import { afterEach, expect, it } from 'vitest'
import { WAL_CLUSTER_REFUSED } from '../src/index.js'
import {
  byFsn,
  openLeader,
  payload,
  readAll,
  removeTempDirs,
  startPeer,
  stateStore,
  tempDir,
} from './support.js'

afterEach(removeTempDirs)

it('a released copy refuses its old leader and opens as the new leader’s log beside the running peer', async () => {
  const [aDir, bDir, cDir] = [await tempDir(), await tempDir(), await tempDir()]
  const [b, c] = [await startPeer(bDir), await startPeer(cDir)]
  const inSync = await stateStore()
  const peers = [
    { nodeId: 'b', url: b.url },
    { nodeId: 'c', url: c.url },
  ]
  const old = await openLeader('p', aDir, peers, { nodeId: 'a', inSync, commitTimeoutMs: 2_000 })
  const returned = []
  for (let i = 0; i < 5; i++) returned.push(await old.append(payload(i)))
  const mine = byFsn(await readAll(old.read(1n)))
  try {
    await b.release('p')
    // B refuses A now; C alone would do, so A's commits go on only through C.
    const promoted = await openLeader('p', bDir, [{ nodeId: 'c', url: c.url }], {
      nodeId: 'b',
      fencingToken: 2n,
      inSync,
    })
    try {
      const copy = byFsn(await readAll(promoted.read(1n)))
      for (const fsn of returned) expect(copy.get(fsn)).toBe(mine.get(fsn))
      expect(await promoted.append(payload(9))).toBe(returned.at(-1)! + 1n)
      await expect(old.append(payload(10))).rejects.toMatchObject({ code: WAL_CLUSTER_REFUSED })
    } finally {
      await promoted.close()
    }
  } finally {
    await old.close().catch(() => {})
    await Promise.all([b.close(), c.close()])
  }
}, 60_000)
