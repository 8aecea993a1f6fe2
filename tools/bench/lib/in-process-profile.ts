/**
 * Where a piece of work in this process spends its CPU: the work runs once under the inspector's
 * sampling profiler, and the profile is read as lib/cpu-profile.ts reads `node --cpu-prof` output.
 * The profiler slows the work down, so this tells shares, not the bench's times.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { Session } from 'node:inspector/promises'
import path from 'node:path'
import { type SelfTime, topSelfTimes } from './cpu-profile.js'

/** Runs `work` under the profiler and resolves with every function's self time, biggest first. */
export async function profileOf(dir: string, work: () => Promise<unknown>): Promise<SelfTime[]> {
  const session = new Session()
  session.connect()
  try {
    await session.post('Profiler.enable')
    await session.post('Profiler.start')
    await work()
    const { profile } = await session.post('Profiler.stop')
    await mkdir(dir, { recursive: true })
    await writeFile(path.join(dir, 'work.cpuprofile'), JSON.stringify(profile))
    return await topSelfTimes(dir, Number.POSITIVE_INFINITY)
  } finally {
    session.disconnect()
  }
}
