import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { SlotLockedError } from '../src/errors.js'
import { openSlot } from '../src/slot.js'
import { payload, tmpSfDir } from './support/helpers.js'

const HOLDER = fileURLToPath(new URL('./fixtures/lock-holder.mjs', import.meta.url))
const fast = { lockHeartbeatMs: 50, lockStaleMs: 1000 }
const children: ChildProcess[] = []

/** Starts a process that holds the slot (the built package); resolves once it owns the lock. */
async function holder(sfDir: string, host = '-'): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [HOLDER, sfDir, host, String(fast.lockHeartbeatMs), String(fast.lockStaleMs)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  children.push(child)
  for await (const line of createInterface({ input: child.stdout! })) if (line === 'ready') return child
  throw new Error('lock holder exited before taking the lock')
}

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
    await ownerRecord(sfDir, { host: 'elsewhere', pid: 4242 })
    // The next heartbeat finds the record changed; until then appends still succeed.
    const appendError = () =>
      slot.append(payload(2)).then(
        () => undefined,
        (error: unknown) => error,
      )
    await expect.poll(appendError, { timeout: 10_000, interval: fast.lockHeartbeatMs }).toMatchObject({
      code: 'SF_SLOT_CLOSED',
      cause: { code: 'SF_LOCK_LOST' },
    })
    await slot.close()
  })

  it('an owner paused longer than lockStaleMs / 2 fences itself before writing again', async () => {
    const sfDir = await tmpSfDir()
    const slot = await openSlot({ sfDir, ...fast })
    const until = performance.now() + fast.lockStaleMs * 0.75
    while (performance.now() < until) {} // a blocked event loop: no heartbeats
    const err = await slot.append(payload(1)).catch((e) => e)
    expect(err.code).toBe('SF_LOCK_LOST')
    await slot.close()
  })

  it('names holder=unknown when the holder cannot be read', () => {
    expect(new SlotLockedError('/x', undefined).message).toContain('held by holder=unknown')
  })
})
