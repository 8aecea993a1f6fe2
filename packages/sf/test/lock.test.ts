import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { crc32c } from '@node-rs/crc32'
import { afterEach, describe, expect, it } from 'vitest'
import { SlotLockedError } from '../src/errors.js'
import { openSlot, type Slot, type SlotOptions } from '../src/slot.js'
import { FaultyFs } from './support/faulty-fs.js'
import { appendAll, captureLogger, collect, payload, tmpSfDir } from './support/helpers.js'

const HOLDER = fileURLToPath(new URL('./fixtures/lock-holder.mjs', import.meta.url))
const fast = { lockHeartbeatMs: 50, lockStaleMs: 1000 }
const children: ChildProcess[] = []

/** Starts a process that opens the slot (the built package) and appends `frames` frames once it owns it. */
function startHolder(sfDir: string, host = '-', frames = 0): ChildProcess {
  const child = spawn(
    process.execPath,
    [HOLDER, sfDir, host, String(fast.lockHeartbeatMs), String(fast.lockStaleMs), String(frames)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  children.push(child)
  return child
}

/** What the holder said: `ready` once it owns the lock and appended its frames, or `refused <code>`. */
async function outcome(child: ChildProcess): Promise<string> {
  for await (const line of createInterface({ input: child.stdout! })) return line
  throw new Error('lock holder exited without a word')
}

/** Resolves once the holder owns the lock and has appended its frames. */
async function ready(child: ChildProcess): Promise<ChildProcess> {
  const said = await outcome(child)
  if (said !== 'ready') throw new Error(`lock holder did not take the lock: ${said}`)
  return child
}

/** Starts a process that holds the slot; resolves once it owns the lock (and appended its frames). */
function holder(sfDir: string, host = '-', frames = 0): Promise<ChildProcess> {
  return ready(startHolder(sfDir, host, frames))
}

/** The frames a holder appends (fixtures/lock-holder.mjs). */
const takerFrames = (n: number) => Array.from({ length: n }, (_, i) => Buffer.from(`taken over ${i + 1}`))

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGKILL')
  await exited
}

/** Writes the owner record a (possibly imaginary) previous owner left behind. */
async function ownerRecord(sfDir: string, rec: Record<string, unknown>): Promise<void> {
  const dir = path.join(sfDir, 'default', '.lock.owner')
  await mkdir(dir, { recursive: true })
  await writeFile(
    path.join(dir, 'owner.json'),
    JSON.stringify({ instance: randomUUID(), heartbeat: 7, ...rec }),
  )
}

/** Start time of a process as Linux /proc reports it (field 22 of /proc/<pid>/stat). */
function procStart(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!
}

/** The host the slot's owner.json names now (read synchronously: the event loop may be blocked). */
function ownerRecordBytes(sfDir: string): Buffer {
  return readFileSync(path.join(sfDir, 'default', '.lock.owner', 'owner.json'))
}

function ownerHost(sfDir: string): string | undefined {
  return JSON.parse(ownerRecordBytes(sfDir).toString('utf8')).host
}

/** The frames in the slot, read by a new owner. */
async function framesIn(sfDir: string, options: Partial<SlotOptions> = {}): Promise<Buffer[]> {
  const slot = await openSlot({ sfDir, ...fast, ...options, logger: captureLogger() })
  const frames = (await collect(slot.replay())).map((f) => Buffer.from(f.payload))
  await slot.close()
  return frames
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Segments of 4 KiB: the spare made after opening is written at once. */
const small = { maxSegmentBytes: 4096, maxTotalBytes: 16 * 4096 }

/** Waits until the slot's spare segment is made (in the background, after opening). */
async function spareReady(slot: Slot): Promise<void> {
  while (slot.stats().totalBytes < 2 * small.maxSegmentBytes) await sleep(2)
}

/** Calls that change the slot's files. */
const CHANGES = new Set(['write', 'writev', 'datasync', 'rename', 'unlink', 'syncDir'])

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) await kill(c)
})

describe('slot lock', () => {
  it('a second process fails with SF_SLOT_LOCKED naming the holder PID and host', async () => {
    const sfDir = await tmpSfDir()
    const child = await holder(sfDir)
    const started = performance.now()
    const err = await openSlot({ sfDir, ...fast }).catch((e) => e)
    expect(err.code).toBe('SF_SLOT_LOCKED')
    expect(err.holderPid).toBe(child.pid)
    expect(err.message).toContain(`PID ${child.pid} on host ${os.hostname()}`)
    expect(performance.now() - started).toBeLessThan(fast.lockStaleMs) // a live local PID: no waiting
  })

  it('takes over at once from a killed process on this host', async () => {
    const sfDir = await tmpSfDir()
    await kill(await holder(sfDir))
    const started = performance.now()
    const slot = await openSlot({ sfDir, ...fast })
    expect(performance.now() - started).toBeLessThan(fast.lockStaleMs)
    const rec = JSON.parse(await readFile(path.join(sfDir, 'default', '.lock.owner', 'owner.json'), 'utf8'))
    expect(rec.pid).toBe(process.pid)
    expect(await readFile(path.join(sfDir, 'default', '.lock.pid'), 'utf8')).toBe(`${process.pid}\n`)
    await slot.close()
  })

  it('takes over at once from a stale owner whose PID now belongs to another process', async () => {
    const sfDir = await tmpSfDir()
    const other = spawn('sleep', ['30'])
    children.push(other)
    await ownerRecord(sfDir, { host: os.hostname(), pid: other.pid, pidStart: '1' })
    const started = performance.now()
    const slot = await openSlot({ sfDir, ...fast })
    expect(performance.now() - started).toBeLessThan(fast.lockStaleMs)
    await slot.close()
  })

  it('refuses an owner whose PID is alive with the recorded start time', async () => {
    const sfDir = await tmpSfDir()
    const other = spawn('sleep', ['30'])
    children.push(other)
    await new Promise((r) => setTimeout(r, 50))
    await ownerRecord(sfDir, { host: os.hostname(), pid: other.pid, pidStart: procStart(other.pid!) })
    await expect(openSlot({ sfDir, ...fast })).rejects.toMatchObject({
      code: 'SF_SLOT_LOCKED',
      holderPid: other.pid,
    })
  })

  it('container case: a killed owner on another host (PID 1) is taken over once its heartbeat is stale', async () => {
    const sfDir = await tmpSfDir()
    await kill(await holder(sfDir, 'container-a'))
    const started = performance.now()
    const slot = await openSlot({ sfDir, ...fast })
    expect(performance.now() - started).toBeGreaterThanOrEqual(fast.lockStaleMs)
    await slot.append(payload(1))
    await slot.close()
  })

  it('container case: a live owner on another host keeps the slot (its heartbeat moves)', async () => {
    const sfDir = await tmpSfDir()
    const child = await holder(sfDir, 'container-b')
    const err = await openSlot({ sfDir, ...fast }).catch((e) => e)
    expect(err.code).toBe('SF_SLOT_LOCKED')
    expect(err.message).toContain(`PID ${child.pid} on host container-b`)
    expect(err.message).toMatch(/heartbeat is fresh/)
  })

  it('a record left by PID 1 of a previous container on this host name is taken over once stale', async () => {
    const sfDir = await tmpSfDir()
    await ownerRecord(sfDir, { host: 'pod-0', pid: 1 })
    const slot = await openSlot({ sfDir, ...fast })
    await slot.close()
  })

  it('an unreadable owner record is taken over once it stays unchanged for lockStaleMs', async () => {
    const sfDir = await tmpSfDir()
    await mkdir(path.join(sfDir, 'default', '.lock.owner'), { recursive: true })
    const slot = await openSlot({ sfDir, ...fast })
    await slot.close()
  })

  it('the same slot opened twice in one process fails at once', async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, ...fast })
    await expect(openSlot({ sfDir, ...fast })).rejects.toMatchObject({ code: 'SF_SLOT_LOCKED' })
    await slot.close()
  })

  it('keeps .lock and .lock.pid after close; removes only .lock.owner', async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, ...fast })
    await slot.close()
    const names = await readdir(path.join(sfDir, 'default'))
    expect(names).toContain('.lock')
    expect(names).toContain('.lock.pid')
    expect(names).not.toContain('.lock.owner')
    const again = await openSlot({ sfDir, ...fast })
    await again.close()
  })

  it('an owner whose lock was taken over stops writing with SF_LOCK_LOST', async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, ...fast })
    await slot.append(payload(1))
    // The other owner heartbeats as a live one does: a heartbeat of ours that read our record just before
    // the first write may rename ours over it once, and the next write replaces it again.
    const taker = { host: 'elsewhere', pid: 4242, instance: randomUUID() }
    let beats = 0
    await ownerRecord(sfDir, { ...taker, heartbeat: beats++ })
    const takerBeats = setInterval(
      () => void ownerRecord(sfDir, { ...taker, heartbeat: beats++ }),
      fast.lockHeartbeatMs,
    )
    // The next heartbeat finds the record changed; until then appends still succeed.
    const appendError = () =>
      slot.append(payload(2)).then(
        () => undefined,
        (error: unknown) => error,
      )
    try {
      await expect.poll(appendError, { timeout: 10_000, interval: fast.lockHeartbeatMs }).toMatchObject({
        code: 'SF_SLOT_CLOSED',
        cause: { code: 'SF_LOCK_LOST' },
      })
    } finally {
      clearInterval(takerBeats)
    }
    await slot.close()
  })

  it('an owner paused longer than lockStaleMs / 2 that nobody took over renews the lock and goes on', async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, ...fast })
    const until = performance.now() + fast.lockStaleMs * 0.75
    while (performance.now() < until) {} // a blocked event loop: no heartbeats
    expect(await slot.append(payload(1))).toBe(1n)
    await slot.close()
    expect(await framesIn(sfDir)).toEqual([payload(1)])
  })

  it('an owner paused while another host took the slot over stops with SF_LOCK_LOST naming it', async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, ...fast, logger: captureLogger() })
    await slot.append(payload(1))
    // Start the pause right after a heartbeat, so that none is in flight across it: one in flight
    // could land our record over the taker's, the narrowest case of lock.ts, where both owners stop.
    const beat = ownerRecordBytes(sfDir)
    while (ownerRecordBytes(sfDir).equals(beat)) await new Promise((resolve) => setTimeout(resolve, 1))
    const taker = startHolder(sfDir, 'elsewhere', 2)
    // A blocked event loop (no heartbeats) until the other host's record has replaced ours.
    while (ownerHost(sfDir) !== 'elsewhere') {}
    const err = await slot.append(payload(2)).catch((e) => e)
    expect(err.code).toBe('SF_LOCK_LOST')
    expect(err.message).toContain(`PID ${taker.pid} on elsewhere took the slot over`)
    await slot.close()
    await kill(await ready(taker))
    expect(await framesIn(sfDir)).toEqual([payload(1), ...takerFrames(2)])
  })

  it('names holder=unknown when the holder cannot be read', () => {
    expect(new SlotLockedError('/x', undefined).message).toContain('held by holder=unknown')
  })
})

describe('slot lock on a stalled disk', () => {
  it('another host taking the slot over during the stall: the old owner stops with SF_LOCK_LOST and writes nothing after', async () => {
    const sfDir = await tmpSfDir()
    const io = new FaultyFs()
    const slot = await openSlot({ sfDir, ...fast, ...small, io, logger: captureLogger() })
    const before = Array.from({ length: 5 }, (_, i) => payload(i + 1))
    await appendAll(slot, before)
    await spareReady(slot)
    const changes: string[] = []
    io.fault = (op, file) => {
      if (CHANGES.has(op)) changes.push(`${op} ${path.basename(file)}`)
      return undefined
    }
    const endStall = io.stall()
    // The old owner's heartbeat waits on the disk, so its record stays unchanged for lockStaleMs.
    const taker = await holder(sfDir, 'elsewhere', 3)
    const late = slot.append(payload(6)).catch((e) => e)
    endStall()
    const err = await late
    expect(err.code).toBe('SF_LOCK_LOST')
    expect(err.message).toContain(`PID ${taker.pid} on elsewhere took the slot over`)
    await expect(slot.append(payload(7))).rejects.toMatchObject({
      code: 'SF_SLOT_CLOSED',
      cause: { code: 'SF_LOCK_LOST' },
    })
    await slot.close()
    expect(changes).toEqual([])
    await kill(taker)
    expect(await framesIn(sfDir, small)).toEqual([...before, ...takerFrames(3)])
  })

  it('a takeover marked while the heartbeat was late: the owner stops instead of renewing over it', async () => {
    const sfDir = await tmpSfDir()
    const io = new FaultyFs()
    const slot = await openSlot({ sfDir, ...fast, io, logger: captureLogger() })
    await slot.append(payload(1))
    const endStall = io.stall()
    await sleep(fast.lockStaleMs) // the silence a taker waits for
    // A taker that saw that silence creates its marker for the record it watched, then looks once more
    // before writing its own: it is about to, when the stall ends.
    const lockDir = path.join(sfDir, 'default', '.lock.owner')
    const record = readFileSync(path.join(lockDir, 'owner.json'))
    writeFileSync(path.join(lockDir, `takeover-${crc32c(record).toString(16)}-0`), '')
    const late = slot.append(payload(2)).catch((e) => e)
    endStall()
    const err = await late
    expect(err.code).toBe('SF_LOCK_LOST')
    expect(err.message).toMatch(/another process was taking the slot over/)
    await slot.close()
  })
})
