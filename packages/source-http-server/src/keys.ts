/**
 * The Idempotency-Keys of recent requests. Each push's offset state holds the keys (and when they
 * arrived) of every request pushed so far within the window, so the committed offset says which
 * keys are durable: after a restart they are answered 200 again, appending nothing.
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
  /** Shared by every state snapshot that holds it: a snapshot copies references, not entries. */
  readonly entry: KeyEntry
  /** Settles with the key's push: its rows once committed (0 for a key restored from the offset). */
  readonly outcome: Promise<number>
}

export class IdempotencyKeys {
  /** In arrival order, oldest first: forgetting takes from the front. */
  private readonly keys = new Map<string, Remembered>()

  constructor(
    private readonly options: KeyOptions,
    restored: KeyState = [],
  ) {
    for (const [key, atMs] of restored)
      this.keys.set(key, { entry: [key, atMs], outcome: Promise.resolve(0) })
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
    const remembered: Remembered = { entry: [key, nowMs], outcome }
    this.keys.set(key, remembered)
    return {
      done,
      fail: (error) => {
        if (this.keys.get(key) === remembered) this.keys.delete(key)
        fail(error)
      },
    }
  }

  /** The offset state: every key remembered now. */
  state(nowMs: number): KeyState {
    this.forgetOld(nowMs)
    return Array.from(this.keys.values(), (remembered) => remembered.entry)
  }

  private forgetOld(nowMs: number): void {
    for (const [key, { entry }] of this.keys) {
      if (entry[1] > nowMs - this.options.windowMs && this.keys.size <= this.options.maxKeys) break
      this.keys.delete(key)
    }
  }
}
