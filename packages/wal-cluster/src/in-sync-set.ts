/**
 * The in-sync set of one pipeline's clustered WAL: one record in a state store,
 *
 *   { "token": "<fencing token>", "leader": "<node id>", "members": ["<node id>", …] }
 *
 * `members` are the peers the leader waits for before a commit returns, so each of them holds every
 * committed frame, which is what makes any of them safe to promote (takeover.ts). The leader is never a
 * member of its own set.
 *
 * Invariants:
 *  1. Every write is conditional on the version read (or on the key's absence), so of two writers that
 *     read the same version one wins; the loser learns what is there instead.
 *  2. A writer whose fencing token is older than the record's never writes: a zombie leader's write
 *     fails with WAL_CLUSTER_FENCED, also when its version condition would have held.
 *  3. Only the record's leader changes the members, and only with the token the record carries.
 */
import { configError, fencedError, notElectableError } from './errors.js'

/**
 * The narrow key-value contract the set needs: single-key reads and conditional writes. `@skippr/state`'s
 * StateBackend (LMDB, DynamoDB) satisfies it as it is, so skipprd passes its state store's backend.
 */
export interface InSyncStore {
  get(key: string): Promise<{ readonly value: unknown; readonly version: number } | undefined>
  put(
    key: string,
    value: InSyncJson,
    condition: { readonly expectedVersion: number } | { readonly mustNotExist: true },
  ): Promise<
    | { readonly ok: true; readonly version: number }
    | {
        readonly ok: false
        readonly current: { readonly value: unknown; readonly version: number } | undefined
      }
  >
}

/** The record as stored (the token is a decimal string: it is 64-bit). */
export type InSyncJson = {
  readonly token: string
  readonly leader: string
  readonly members: readonly string[]
}

export interface InSyncRecord {
  readonly token: bigint
  readonly leader: string
  readonly members: readonly string[]
}

/** Where a pipeline's set lives when the caller names no key. */
export function inSyncKey(pipeline: string): string {
  return `wal-cluster/${encodeURIComponent(pipeline)}/in-sync`
}

/** The set record as a leader holds it: the last version it wrote, and the writes it makes, one at a time. */
export class InSyncSet {
  private chain: Promise<unknown> = Promise.resolve()

  private constructor(
    private readonly store: InSyncStore,
    private readonly key: string,
    private record: InSyncRecord,
    private version: number,
  ) {}

  /** The set's record now, or undefined when there is none. */
  static async read(
    store: InSyncStore,
    key: string,
  ): Promise<{ record: InSyncRecord; version: number } | undefined> {
    const entry = await store.get(key)
    return entry === undefined ? undefined : { record: parseRecord(key, entry.value), version: entry.version }
  }

  /**
   * Takes the set as leader `nodeId` with `token`: a new set (no members yet) when there is none; the
   * record's own leader again with a token at least the record's (a restart under a new lease); or, with
   * a newer token, a member of the set, which leaves the members (a takeover). Anyone else is refused.
   */
  static async claim(store: InSyncStore, key: string, nodeId: string, token: bigint): Promise<InSyncSet> {
    const found = await InSyncSet.read(store, key)
    if (found === undefined) {
      const record = { token, leader: nodeId, members: [] }
      const put = await store.put(key, toJson(record), { mustNotExist: true })
      if (!put.ok) throw fencedError(key, 'another leader created it first')
      return new InSyncSet(store, key, record, put.version)
    }
    const { record, version } = found
    if (token < record.token || (token === record.token && record.leader !== nodeId))
      throw fencedError(key, `it holds fencing token ${record.token}, newer than this node's ${token}`)
    if (record.leader !== nodeId && !record.members.includes(nodeId))
      throw notElectableError(key, nodeId, record)
    const claimed = { token, leader: nodeId, members: record.members.filter((m) => m !== nodeId) }
    if (token === record.token) return new InSyncSet(store, key, claimed, version)
    const put = await store.put(key, toJson(claimed), { expectedVersion: version })
    if (!put.ok) throw fencedError(key, 'another node changed it while this one claimed it')
    return new InSyncSet(store, key, claimed, put.version)
  }

  get members(): readonly string[] {
    return this.record.members
  }

  get token(): bigint {
    return this.record.token
  }

  add(nodeId: string): Promise<void> {
    return this.change((members) => (members.includes(nodeId) ? members : [...members, nodeId]))
  }

  remove(nodeId: string): Promise<void> {
    return this.change((members) => members.filter((m) => m !== nodeId))
  }

  /** One conditional write after every earlier one; a refusal means a newer leader took the set. */
  private change(next: (members: readonly string[]) => readonly string[]): Promise<void> {
    const write = this.chain.then(async () => {
      const record = { ...this.record, members: next(this.record.members) }
      const put = await this.store.put(this.key, toJson(record), { expectedVersion: this.version })
      if (!put.ok) {
        const now = put.current === undefined ? undefined : parseRecord(this.key, put.current.value)
        throw fencedError(
          this.key,
          now === undefined
            ? 'the record is gone'
            : `node ${now.leader} holds it with fencing token ${now.token}`,
        )
      }
      this.record = record
      this.version = put.version
    })
    this.chain = write.catch(() => {})
    return write
  }
}

function toJson(record: InSyncRecord): InSyncJson {
  return { token: record.token.toString(), leader: record.leader, members: [...record.members] }
}

function parseRecord(key: string, value: unknown): InSyncRecord {
  const v = value as Partial<Record<keyof InSyncJson, unknown>> | null
  if (
    typeof v?.token === 'string' &&
    /^\d+$/.test(v.token) &&
    typeof v.leader === 'string' &&
    Array.isArray(v.members) &&
    v.members.every((m) => typeof m === 'string')
  )
    return { token: BigInt(v.token), leader: v.leader, members: v.members }
  throw configError(`unreadable in-sync set record ${key}: ${JSON.stringify(value).slice(0, 80)}`)
}
