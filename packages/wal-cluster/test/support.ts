/** Temp directories, a peer in this process, a leader's options, and comparing copies frame by frame. */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { LmdbBackend } from '@skippr/state'
import type { BackendOptions, WalBackend, WalFrame } from '@skippr/wal'
import {
  type ClusteredWalOptions,
  type ClusterPeer,
  clusteredWal,
  type InSyncStore,
  startWalPeer,
  type WalPeer,
} from '../src/index.js'

export const SECRET = 'test-secret'

const dirs: string[] = []
const stores: LmdbBackend[] = []

export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'wal-cluster-'))
  dirs.push(dir)
  return dir
}

/** A real state store (LMDB) in a temp directory, for the in-sync set; closed by removeTempDirs(). */
export async function stateStore(dir?: string): Promise<InSyncStore> {
  const store = LmdbBackend.open(dir ?? (await tempDir()))
  stores.push(store)
  return store
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(stores.splice(0).map((store) => store.close()))
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
}

export function startPeer(dataDir: string, port = 0): Promise<WalPeer> {
  return startWalPeer({ dataDir, port, secret: SECRET, logger: quiet })
}

export function backendOptions(pipeline: string, dataDir: string): BackendOptions {
  return {
    pipeline,
    dataDir,
    bytesPerFile: 64 * 1024,
    maxTotalBytes: 1 << 30,
    keepFreeBytes: 0,
    keepFreeBatches: 0,
    logger: quiet,
  }
}

/** A peer given by URL alone is named by it in the in-sync set. */
export function clusterPeers(peers: readonly (string | ClusterPeer)[]): ClusterPeer[] {
  return peers.map((peer) => (typeof peer === 'string' ? { nodeId: peer, url: peer } : peer))
}

/** Opens a leader's log replicated to `peers`, with a set store of its own unless `options` names one. */
export async function openLeader(
  pipeline: string,
  dataDir: string,
  peers: readonly (string | ClusterPeer)[],
  options: Partial<ClusteredWalOptions> = {},
): Promise<WalBackend> {
  return clusteredWal({
    nodeId: 'leader',
    secret: SECRET,
    fencingToken: 1n,
    inSync: options.inSync ?? (await stateStore()),
    ...options,
    peers: clusterPeers(peers),
  }).open(backendOptions(pipeline, dataDir))
}

export function payload(i: number): Uint8Array {
  return Uint8Array.from(randomBytes(1 + ((i * 7919) % 9000)))
}

export async function readAll(read: AsyncIterable<WalFrame>): Promise<WalFrame[]> {
  const out: WalFrame[] = []
  for await (const { fsn, payload } of read) out.push({ fsn, payload: Uint8Array.from(payload) })
  return out
}

/** FSN → hex of the bytes, for comparing copies with one readable diff. */
export function byFsn(frames: readonly WalFrame[]): Map<bigint, string> {
  return new Map(frames.map((f) => [f.fsn, Buffer.from(f.payload).toString('hex')]))
}

const lines: string[] = []
/** Collects what the storage logs, so a test can check the one line a refusal gives. */
export const quiet = {
  info: () => {},
  warn: (message: string) => void lines.push(message),
  error: (message: string) => void lines.push(message),
}
export const logged = (): readonly string[] => lines
