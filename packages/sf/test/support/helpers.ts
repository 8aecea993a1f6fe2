import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach } from 'vitest'
import type { Slot, SlotFrame } from '../../src/base-slot.js'
import type { SlotLogger } from '../../src/logger.js'

const made: string[] = []

/** A fresh temporary sfDir, removed after the test. */
export async function tmpSfDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'skippr-sf-'))
  made.push(dir)
  return dir
}

afterEach(async () => {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true })
})

/**
 * What a crash would leave of the running slot in `slotDir`: its segment files, watermark and id as they are
 * now, copied into a new sfDir (returned) under the same sender id (its lock is not copied). A spare renamed while they are copied may be
 * missing from the copy, as it would be after a crash just before.
 */
export async function crashCopy(slotDir: string): Promise<string> {
  const sfDir = await tmpSfDir()
  const copy = path.join(sfDir, path.basename(slotDir))
  await mkdir(copy)
  const kept = (n: string) => n.endsWith('.sfa') || n === '.ack-watermark' || n === '.slot-id'
  for (const name of (await readdir(slotDir)).filter(kept)) {
    await copyFile(path.join(slotDir, name), path.join(copy, name)).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e
    })
  }
  return sfDir
}

export interface CapturedLogger extends SlotLogger {
  lines: Array<{ level: 'info' | 'warn' | 'error'; message: string }>
  text(level?: 'info' | 'warn' | 'error'): string
}

export function captureLogger(): CapturedLogger {
  const lines: CapturedLogger['lines'] = []
  return {
    lines,
    info: (message) => lines.push({ level: 'info', message }),
    warn: (message) => lines.push({ level: 'warn', message }),
    error: (message) => lines.push({ level: 'error', message }),
    text: (level) =>
      lines
        .filter((l) => !level || l.level === level)
        .map((l) => l.message)
        .join('\n'),
  }
}

/** A recognisable payload: its id, then filler derived from the id. */
export function payload(id: number, size = 100): Buffer {
  const b = Buffer.alloc(Math.max(8, size))
  b.writeUInt32LE(id, 0)
  for (let i = 4; i < b.length; i++) b[i] = (id * 31 + i) & 0xff
  return b
}

export async function collect(frames: AsyncIterable<SlotFrame>): Promise<SlotFrame[]> {
  const out: SlotFrame[] = []
  for await (const f of frames) out.push(f)
  return out
}

export async function appendAll(slot: Slot, payloads: Buffer[]): Promise<bigint[]> {
  return Promise.all(payloads.map((p) => slot.append(p)))
}

export function segmentPath(sfDir: string, gen: number, senderId = 'default'): string {
  return path.join(sfDir, senderId, `sf-${gen.toString(16).padStart(16, '0')}.sfa`)
}
