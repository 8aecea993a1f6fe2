/**
 * The slot lock. Node.js has no flock, so ownership is a directory, `.lock.owner/`, created with an
 * exclusive mkdir. Inside, `owner.json` names the owner (host, PID, process start time, random instance id)
 * and carries a heartbeat counter that the owner rewrites every `heartbeatMs`.
 *
 * An opener that finds the directory takes it over when
 *  - the owner is on this host and its PID is gone, or the PID now belongs to a process that started at a
 *    different time (a recycled PID): at once;
 *  - otherwise (another host, e.g. a replaced container; or an unreadable record), when owner.json does not
 *    change for `staleMs` of watching. Any change means a live owner: SlotLockedError.
 * Takers race through an exclusively created marker file (`takeover-<fingerprint>-<n>`), so one wins.
 *
 * Never two live owners: an owner writes (frames or heartbeats) only within staleMs/2 of its last
 * successful heartbeat, and checks before each heartbeat that owner.json still names it. A taker needs
 * staleMs of silence, so an owner that was paused long enough to lose the lock notices (SlotLockLostError)
 * before it writes again.
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
  private lastBeat = performance.now()
  private timer: NodeJS.Timeout | undefined
  private beating = false
  private lostReason: string | undefined

  private constructor(
    private readonly dir: string,
    private readonly instance: string,
    private readonly timing: LockTiming,
    private readonly onLost: (error: SlotLockLostError) => void,
  ) {}

  static async acquire(
    dir: string,
    timing: LockTiming,
    onLost: (error: SlotLockLostError) => void,
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
      const lock = new SlotLock(dir, randomUUID(), timing, onLost)
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

  /** Throws when this process may no longer write to the slot. */
  check(): void {
    if (this.lostReason === undefined && performance.now() - this.lastBeat > this.timing.staleMs / 2) {
      this.lose(`no heartbeat for ${Math.round(performance.now() - this.lastBeat)} ms`)
    }
    if (this.lostReason !== undefined) throw new SlotLockLostError(this.dir, this.lostReason)
  }

  async release(): Promise<void> {
    clearInterval(this.timer)
    heldHere.delete(this.dir)
    if (this.lostReason !== undefined) return
    this.lostReason = 'released'
    const rec = await readOwner(this.dir)
    if (rec?.instance === this.instance)
      await fsp.rm(path.join(this.dir, LOCK_DIR), { recursive: true, force: true })
  }

  private async take(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await fsp.mkdir(path.join(this.dir, LOCK_DIR))
        await this.writeRecord()
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
    const raw = await readOwnerBytes(this.dir)
    const rec = parseOwner(raw)
    const verdict = judgeLocally(rec)
    if (verdict === 'live') throw new SlotLockedError(this.dir, rec, 'the process is running')
    if (verdict === 'unknown' && (await changesWithin(this.dir, raw, this.timing))) {
      throw new SlotLockedError(
        this.dir,
        parseOwner(await readOwnerBytes(this.dir)),
        'its heartbeat is fresh',
      )
    }
    await this.claim(raw, rec)
    await this.writeRecord()
  }

  /** Creates the first free takeover marker for this exact owner record; a marker younger than staleMs
   * means another opener is taking over right now. */
  private async claim(raw: Buffer | undefined, rec: OwnerRecord | undefined): Promise<void> {
    const fingerprint = raw ? crc32c(raw).toString(16) : 'none'
    for (let n = 0; ; n++) {
      const marker = path.join(this.dir, LOCK_DIR, `takeover-${fingerprint}-${n}`)
      try {
        await (await fsp.open(marker, 'wx')).close()
        break
      } catch (e) {
        if (errorCode(e) !== 'EEXIST') throw e
        const age = Date.now() - (await fsp.stat(marker)).mtimeMs
        if (age < this.timing.staleMs)
          throw new SlotLockedError(this.dir, rec, 'another process is taking over')
      }
    }
    const now = await readOwnerBytes(this.dir)
    if (!sameBytes(now, raw))
      throw new SlotLockedError(this.dir, parseOwner(now), 'another process took over')
  }

  private async writeRecord(): Promise<void> {
    const rec: OwnerRecord = {
      host: os.hostname(),
      pid: process.pid,
      instance: this.instance,
      heartbeat: this.heartbeat,
    }
    const start = procStat(process.pid)?.start
    if (start !== undefined) rec.pidStart = start
    const file = path.join(this.dir, LOCK_DIR, OWNER_FILE)
    const tmp = `${file}.${this.instance}.tmp`
    await fsp.writeFile(tmp, JSON.stringify(rec))
    await fsp.rename(tmp, file)
    this.lastBeat = performance.now()
  }

  private async beat(): Promise<void> {
    if (this.beating || this.lostReason !== undefined) return
    this.beating = true
    try {
      this.check()
      const rec = await readOwner(this.dir)
      if (rec?.instance !== this.instance) {
        this.lose(rec ? `PID ${rec.pid} on ${rec.host} took the slot over` : 'the lock directory was removed')
        return
      }
      this.heartbeat++
      this.check()
      await this.writeRecord()
    } catch {
      // A failed heartbeat (say, a full disk) is retried on the next tick; check() fences this process
      // if they keep failing for staleMs / 2.
    } finally {
      this.beating = false
    }
  }

  private lose(reason: string): void {
    if (this.lostReason !== undefined) return
    this.lostReason = reason
    clearInterval(this.timer)
    this.onLost(new SlotLockLostError(this.dir, reason))
  }
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

/** Watches owner.json for staleMs; true as soon as its bytes change (a live owner's heartbeat). */
async function changesWithin(dir: string, raw: Buffer | undefined, timing: LockTiming): Promise<boolean> {
  const until = performance.now() + timing.staleMs
  const step = Math.max(10, Math.min(timing.heartbeatMs / 2, timing.staleMs / 4))
  while (performance.now() < until) {
    await new Promise((r) => setTimeout(r, step))
    if (!sameBytes(await readOwnerBytes(dir), raw)) return true
  }
  return false
}

async function writeCompatibilityFiles(dir: string): Promise<void> {
  await (await fsp.open(path.join(dir, '.lock'), 'a')).close()
  await fsp.writeFile(path.join(dir, '.lock.pid'), `${process.pid}\n`)
}

async function readOwnerBytes(dir: string): Promise<Buffer | undefined> {
  try {
    return await fsp.readFile(path.join(dir, LOCK_DIR, OWNER_FILE))
  } catch (e) {
    if (errorCode(e) === 'ENOENT') return undefined
    throw e
  }
}

async function readOwner(dir: string): Promise<OwnerRecord | undefined> {
  return parseOwner(await readOwnerBytes(dir))
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
