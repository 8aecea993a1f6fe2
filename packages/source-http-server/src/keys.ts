/**
 * The Idempotency-Keys of recent requests. Each push's offset state holds the keys (and when they
 * arrived) of every request pushed so far within the window, so the committed offset says which
 * keys are durable: after a restart they are answered 200 again, appending nothing.
 *
 * A push's state is a `KeySnapshot`: nothing is copied per push (at 10,000 keys a copy cost about
 * 0.3 ms, a push's whole budget); the keys are listed when an offset holding it is written as JSON,
 * once per commit. It lists only keys begun up to its push, however late it is written, so a key
 * of a later request, whose rows may never commit, is never in a committed offset. Keys forgotten
 * meanwhile (older than the window, or beyond the most kept) are left out, as a later push's state
 * would leave them out.
 */

/** A key and when its request arrived (ms since the epoch): what the offset holds. */
export type KeyEntry = [key: string, atMs: number]
export type KeyState = KeyEntry[]

/** Longest key taken: every commit's offset carries every remembered key. */
export const MAX_KEY_LENGTH = 200

export interface KeyOptions {
  readonly windowMs: number
  readonly maxKeys: number
}

interface Remembered {
  readonly entry: KeyEntry
  /** Begun as the how-manieth key (0 for a key restored from the offset): what a snapshot lists up to. */
  readonly order: number
  /** Settles with the key's push: its rows once committed (0 for a key restored from the offset). */
  readonly outcome: Promise<number>
}

export class IdempotencyKeys {
  /** In arrival order, oldest first: forgetting takes from the front. */
  private readonly keys = new Map<string, Remembered>()
  private lastOrder = 0

  constructor(
    private readonly options: KeyOptions,
    restored: KeyState = [],
  ) {
    // An offset handed back without going through JSON still holds the snapshot itself.
    const entries = Array.isArray(restored) ? restored : (restored as unknown as KeySnapshot).toJSON()
    for (const [key, atMs] of entries)
      this.keys.set(key, { entry: [key, atMs], order: 0, outcome: Promise.resolve(0) })
  }

  /** The outcome of the request that sent `key` (committed or pending), if it is remembered. */
  outcome(key: string, nowMs: number): Promise<number> | undefined {
    this.forgetOld(nowMs)
    return this.keys.get(key)?.outcome
  }

  /**
   * Remembers `key` for a request about to be pushed, before its offset state is taken; the
   * request settles it with its push. A failed push forgets the key, so a retry is pushed again
   * (no push after a failed one commits: they fail together).
   */
  begin(key: string, nowMs: number): { done(rows: number): void; fail(error: unknown): void } {
    let done!: (rows: number) => void
    let fail!: (error: unknown) => void
    const outcome = new Promise<number>((resolve, reject) => {
      done = resolve
      fail = reject
    })
    outcome.catch(() => {}) // a request that waits on it reads its rejection
    const remembered: Remembered = { entry: [key, nowMs], order: ++this.lastOrder, outcome }
    this.keys.set(key, remembered)
    return {
      done,
      fail: (error) => {
        if (this.keys.get(key) === remembered) this.keys.delete(key)
        fail(error)
      },
    }
  }

  /**
   * The offset state as of now: every key remembered, up to the latest begun. Typed as the JSON it
   * is written as (see KeySnapshot).
   */
  state(nowMs: number): KeyState {
    this.forgetOld(nowMs)
    return new KeySnapshot(this.keys, this.lastOrder) as unknown as KeyState
  }

  private forgetOld(nowMs: number): void {
    for (const [key, { entry }] of this.keys) {
      if (entry[1] > nowMs - this.options.windowMs && this.keys.size <= this.options.maxKeys) break
      this.keys.delete(key)
    }
  }
}

/** The keys remembered as of one push, listed only when written (`JSON.stringify` calls `toJSON`). */
class KeySnapshot {
  constructor(
    private readonly keys: ReadonlyMap<string, Remembered>,
    private readonly upTo: number,
  ) {}

  toJSON(): KeyState {
    const listed: KeyState = []
    // In begin order: a Map iterates in insertion order, and a key is inserted when it is begun.
    for (const { entry, order } of this.keys.values()) {
      if (order > this.upTo) break
      listed.push(entry)
    }
    return listed
  }
}
