/**
 * The slot lock. Node.js has no flock, so ownership is a directory, `.lock.owner/`, created with an
 * exclusive mkdir. Inside, `owner.json` names the owner (host, PID, process start time, random instance id)
 * and carries a heartbeat counter that the owner rewrites every `heartbeatMs`. owner.json is read and
 * written with plain fs calls (lock-files.ts), on libuv's thread pool with the slot's writes and syncs: a
 * disk that stalls those for longer than staleMs / 2 makes the heartbeat late as well, which is why a late
 * heartbeat must be able to renew the lock rather than give it up (below).
 *
 * An opener that finds the directory takes it over when
 *  - the owner is on this host and its PID is gone, or the PID now belongs to a process that started at a
 *    different time (a recycled PID): at once;
 *  - otherwise (another host, e.g. a replaced container; or an unreadable record), when owner.json does not
 *    change for `staleMs` of watching. Any change means a live owner: SlotLockedError.
 * Either way the taker then (a) creates a marker, `takeover-<fingerprint of the record it saw>-<n>`,
 * exclusively, so one taker wins (it holds the taker's host and PID, to name it), (b) reads owner.json
 * once more and gives up if it changed, (c) writes its own record.
 *
 * Never two live owners:
 *  - The lease. An owner writes (frames, segments, the watermark) only within staleMs / 2 of the start of
 *    its last renewal. A taker needs staleMs of silence after that renewal became visible, which was after
 *    it started; the other staleMs / 2 is the margin for a write issued in time to land (a write held
 *    longer than that, in the thread pool or the kernel, is beyond what a lease can fence).
 *  - A renewal (each heartbeat) reads owner.json, which must name this instance (else the lock is lost:
 *    SlotLockLostError), and writes the next record. The record it replaced appeared after the last
 *    renewal began, and a taker marks a record only after staleMs of watching it; so when the new record
 *    is in place within staleMs of that start (the normal path), any taker of the old one sees the change
 *    at its (b) and gives up. Later than that, the renewal then lists the markers: one for the record it
 *    replaced means a taker saw that record unchanged for staleMs and may write its own at any moment, and
 *    the lock is lost. (A late renewal also lists them before writing, so that it does not write over the
 *    record of a taker that already finished, and can name it.)
 *  - That holds however late the heartbeat is. A taker that finished before our read shows in the record.
 *    Otherwise, if our new record is in place before the taker's (b), it sees the change and gives up; if
 *    not, our rename came after its (a), so past staleMs, and the listing we then make finds the marker
 *    ((a) < (b) < our rename < our listing): we give up. In the
 *    narrowest case, a taker writing (c) between our read and our rename, we overwrite its record and stop
 *    on its marker, and it stops at its next heartbeat on finding our record: neither writes after that,
 *    and the slot is taken over again once the record has been unchanged for staleMs.
 *  - So an owner whose heartbeat was late (a stalled disk held the thread pool it waits on, or the
 *    event loop was blocked) does not give up: its writes wait (`writable()`) until a heartbeat begun after the lease ran
 *    out renews it, then go on; or the lock is lost and they fail. A heartbeat that fails with an error (a
 *    full disk, say) rather than answering late loses the lock once the lease has run out.
 *
 * `.lock` (empty) and `.lock.pid` (PID + '\n') are kept for compatibility with other clients and never
 * deleted.
 */
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import * as fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { crc32c } from '@node-rs/crc32'
import { SlotLockedError, SlotLockLostError } from './errors.js'
import { errorCode } from './io.js'
import { type LockFiles, nodeLockFiles } from './lock-files.js'

export const LOCK_DIR = '.lock.owner'
const OWNER_FILE = 'owner.json'

export interface LockTiming {
  heartbeatMs: number
  staleMs: number
}

interface OwnerRecord {
  host: string
  pid: number
  /** Process start time from /proc (Linux), to recognise a recycled PID. */
  pidStart?: string
  instance: string
  heartbeat: number
}

/** Slot directories locked by this module instance (a second open in one process fails at once). */
const heldHere = new Set<string>()

export class SlotLock {
  private heartbeat = 0
  /** When the last renewal of owner.json began (performance.now()): the lease runs staleMs / 2 from it. */
  private renewedAt = performance.now()
  private timer: NodeJS.Timeout | undefined
  private beating: Promise<void> | undefined
  private lostReason: string | undefined

  private constructor(
    private readonly dir: string,
    private readonly instance: string,
    private readonly timing: LockTiming,
    private readonly files: LockFiles,
    private readonly onLost: (error: SlotLockLostError) => void,
  ) {}

  static async acquire(
    dir: string,
    timing: LockTiming,
    onLost: (error: SlotLockLostError) => void,
    files: LockFiles = nodeLockFiles,
  ): Promise<SlotLock> {
    if (heldHere.has(dir)) {
      throw new SlotLockedError(
        dir,
        { pid: process.pid, host: os.hostname() },
        'already open in this process',
      )
    }
    heldHere.add(dir)
    try {
      const lock = new SlotLock(dir, randomUUID(), timing, files, onLost)
      await fsp.mkdir(dir, { recursive: true })
      await lock.take()
      await writeCompatibilityFiles(dir)
      lock.timer = setInterval(() => void lock.beat(), timing.heartbeatMs)
      lock.timer.unref()
      return lock
    } catch (e) {
      heldHere.delete(dir)
      throw e
    }
  }

  /**
   * Undefined when this process may write now. While the lease has run out, a promise: it resolves once a
   * heartbeat renewed the lock, and rejects with SlotLockLostError when the lock is lost; the caller
   * writes nothing until it settles.
   */
  writable(): Promise<void> | undefined {
    if (this.lostReason === undefined && this.leaseHolds()) return undefined
    return this.renewed()
  }

  async release(): Promise<void> {
    clearInterval(this.timer)
    heldHere.delete(this.dir)
    if (this.lostReason !== undefined) return
    this.lostReason = 'released'
    await this.beating // a heartbeat in flight must not write a record once the directory is gone
    const rec = parseOwner(await this.files.read(this.ownerFile))
    if (rec?.instance === this.instance)
      await fsp.rm(path.join(this.dir, LOCK_DIR), { recursive: true, force: true })
  }

  private get ownerFile(): string {
    return path.join(this.dir, LOCK_DIR, OWNER_FILE)
  }

  private leaseHolds(): boolean {
    return performance.now() - this.renewedAt <= this.timing.staleMs / 2
  }

  /** Waits for heartbeats until one begun after the lease ran out renews it, or the lock is lost. */
  private async renewed(): Promise<void> {
    while (this.lostReason === undefined && !this.leaseHolds()) await this.beat()
    if (this.lostReason !== undefined) throw new SlotLockLostError(this.dir, this.lostReason)
  }

  private async take(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await fsp.mkdir(path.join(this.dir, LOCK_DIR))
        this.renewedAt = await this.writeRecord()
        return
      } catch (e) {
        if (errorCode(e) !== 'EEXIST') throw e
      }
      try {
        await this.takeOver()
        return
      } catch (e) {
        // The owner released the lock while we looked: try the plain mkdir again.
        if (errorCode(e) !== 'ENOENT' || attempt >= 2) throw e
      }
    }
  }

  private async takeOver(): Promise<void> {
    const raw = await this.files.read(this.ownerFile)
    const rec = parseOwner(raw)
    const verdict = judgeLocally(rec)
    if (verdict === 'live') throw new SlotLockedError(this.dir, rec, 'the process is running')
    if (verdict === 'unknown' && (await this.changesWithin(raw))) {
      throw new SlotLockedError(
        this.dir,
        parseOwner(await this.files.read(this.ownerFile)),
        'its heartbeat is fresh',
      )
    }
    await this.claim(raw, rec)
    this.renewedAt = await this.writeRecord()
  }

  /** Watches owner.json for staleMs; true as soon as its bytes change (a live owner's heartbeat). */
  private async changesWithin(raw: Buffer | undefined): Promise<boolean> {
    const { heartbeatMs, staleMs } = this.timing
    const until = performance.now() + staleMs
    const step = Math.max(10, Math.min(heartbeatMs / 2, staleMs / 4))
    while (performance.now() < until) {
      await new Promise((r) => setTimeout(r, step))
      if (!sameBytes(await this.files.read(this.ownerFile), raw)) return true
    }
    return false
  }

  /** Creates the first free takeover marker for this exact owner record; a marker younger than staleMs
   * means another opener is taking over right now. Then owner.json must still hold that record. */
  private async claim(raw: Buffer | undefined, rec: OwnerRecord | undefined): Promise<void> {
    for (let n = 0; ; n++) {
      const marker = path.join(this.dir, LOCK_DIR, `${markerPrefix(raw)}${n}`)
      try {
        const handle = await fsp.open(marker, 'wx')
        try {
          // Names this taker to an owner whose late renewal wrote over our record (renew()).
          await handle.writeFile(JSON.stringify({ host: os.hostname(), pid: process.pid }))
        } finally {
          await handle.close()
        }
        break
      } catch (e) {
        if (errorCode(e) !== 'EEXIST') throw e
        const age = Date.now() - (await fsp.stat(marker)).mtimeMs
        if (age < this.timing.staleMs)
          throw new SlotLockedError(this.dir, rec, 'another process is taking over')
      }
    }
    const now = await this.files.read(this.ownerFile)
    if (!sameBytes(now, raw))
      throw new SlotLockedError(this.dir, parseOwner(now), 'another process took over')
  }

  /** Writes owner.json with the current heartbeat counter; returns when the write began. */
  private async writeRecord(): Promise<number> {
    const startedAt = performance.now()
    const rec: OwnerRecord = {
      host: os.hostname(),
      pid: process.pid,
      instance: this.instance,
      heartbeat: this.heartbeat,
    }
    const start = procStat(process.pid)?.start
    if (start !== undefined) rec.pidStart = start
    const file = this.ownerFile
    await this.files.replace(file, `${file}.${this.instance}.tmp`, Buffer.from(JSON.stringify(rec)))
    return startedAt
  }

  /** The heartbeat in flight, or a new one. */
  private beat(): Promise<void> {
    this.beating ??= this.renew().finally(() => {
      this.beating = undefined
    })
    return this.beating
  }

  /** One heartbeat: a renewal as the module comment describes, safe however late it comes. */
  private async renew(): Promise<void> {
    if (this.lostReason !== undefined) return
    const startedAt = performance.now()
    try {
      const raw = await this.files.read(this.ownerFile)
      const rec = parseOwner(raw)
      if (rec?.instance !== this.instance) {
        this.lose(rec ? `PID ${rec.pid} on ${rec.host} took the slot over` : 'owner.json was removed')
        return
      }
      // Late, a taker may have marked the record we read: give up before writing over its record.
      // The check after the write is the one the module comment's argument rests on.
      if (!this.replacedInTime() && (await this.takeoverMarked(raw))) {
        this.lose(await this.takerNamed(raw))
        return
      }
      this.heartbeat++
      await this.writeRecord()
      if (!this.replacedInTime() && (await this.takeoverMarked(raw))) {
        this.lose(await this.takerNamed(raw))
        return
      }
      this.renewedAt = startedAt
    } catch (e) {
      // Retried on the next tick while the lease holds; after that nothing tells whether a taker came.
      if (!this.leaseHolds()) this.lose(`no heartbeat for ${this.silenceMs()} ms: ${(e as Error).message}`)
    }
  }

  /** True while a taker of the record in place at the last renewal cannot have marked it yet. */
  private replacedInTime(): boolean {
    return performance.now() - this.renewedAt < this.timing.staleMs
  }

  private async takeoverMarked(raw: Buffer | undefined): Promise<boolean> {
    const prefix = markerPrefix(raw)
    return (await this.files.list(path.join(this.dir, LOCK_DIR))).some((n) => n.startsWith(prefix))
  }

  /**
   * Why the lock is lost to a takeover marked for record `raw`: the taker, named by its record, or
   * by its marker when our renewal wrote over that record.
   */
  private async takerNamed(raw: Buffer | undefined): Promise<string> {
    const rec = parseOwner(await this.files.read(this.ownerFile).catch(() => undefined))
    if (rec && rec.instance !== this.instance) return `PID ${rec.pid} on ${rec.host} took the slot over`
    const dir = path.join(this.dir, LOCK_DIR)
    const names = await this.files.list(dir).catch(() => [])
    const marker = names.find((name) => name.startsWith(markerPrefix(raw)))
    const taker = marker && parseTaker(await this.files.read(path.join(dir, marker)).catch(() => undefined))
    return taker
      ? `PID ${taker.pid} on ${taker.host} took the slot over`
      : 'another process was taking the slot over'
  }

  private silenceMs(): number {
    return Math.round(performance.now() - this.renewedAt)
  }

  private lose(reason: string): void {
    if (this.lostReason !== undefined) return
    this.lostReason = reason
    clearInterval(this.timer)
    this.onLost(new SlotLockLostError(this.dir, reason))
  }
}

/** Takeover markers for owner record `raw` start with this; its number follows. */
function markerPrefix(raw: Buffer | undefined): string {
  return `takeover-${raw ? crc32c(raw).toString(16) : 'none'}-`
}

/** 'dead' when the record proves the owner is gone, 'live' when it proves it runs, else 'unknown'. */
function judgeLocally(rec: OwnerRecord | undefined): 'dead' | 'live' | 'unknown' {
  if (!rec || rec.host !== os.hostname()) return 'unknown'
  if (!pidExists(rec.pid)) return 'dead'
  const proc = procStat(rec.pid)
  if (proc?.state === 'Z') return 'dead' // killed, not yet reaped by its parent
  if (proc && rec.pidStart !== undefined && proc.start !== rec.pidStart) return 'dead'
  // Our own PID with another instance: a previous incarnation (container PID 1) or another worker thread.
  return rec.pid === process.pid ? 'unknown' : 'live'
}

async function writeCompatibilityFiles(dir: string): Promise<void> {
  await (await fsp.open(path.join(dir, '.lock'), 'a')).close()
  await fsp.writeFile(path.join(dir, '.lock.pid'), `${process.pid}\n`)
}

function parseOwner(raw: Buffer | undefined): OwnerRecord | undefined {
  if (!raw) return undefined
  try {
    const rec = JSON.parse(raw.toString('utf8')) as Partial<OwnerRecord>
    if (typeof rec.host !== 'string' || typeof rec.pid !== 'number' || typeof rec.instance !== 'string') {
      return undefined
    }
    return rec as OwnerRecord
  } catch {
    return undefined
  }
}

/** The taker a takeover marker names; undefined while it is still empty, or unreadable. */
function parseTaker(raw: Buffer | undefined): { host: string; pid: number } | undefined {
  try {
    const taker = JSON.parse(raw?.toString('utf8') ?? '') as { host?: unknown; pid?: unknown }
    return typeof taker.host === 'string' && typeof taker.pid === 'number'
      ? { host: taker.host, pid: taker.pid }
      : undefined
  } catch {
    return undefined
  }
}

function sameBytes(a: Buffer | undefined, b: Buffer | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.equals(b)
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return errorCode(e) === 'EPERM'
  }
}

/** State and start time (clock ticks since boot) of a process from Linux /proc; undefined elsewhere. */
function procStat(pid: number): { state: string; start: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields 3 and 22; the command name (field 2) may contain spaces, so count from its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return fields[0] && fields[19] ? { state: fields[0], start: fields[19] } : undefined
  } catch {
    return undefined
  }
}
