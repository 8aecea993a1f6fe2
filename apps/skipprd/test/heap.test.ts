import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

/** The built module, as the CLI runs it (the test task builds first). */
const heapModule = fileURLToPath(new URL('../dist/heap.js', import.meta.url))

/** Young generation size (MB) after churning objects that survive a few collections, in a fresh Node. */
function youngGenerationAfterChurn(keep: boolean): number {
  const script = `
    const v8 = await import('node:v8')
    if (${keep}) (await import(${JSON.stringify(heapModule)})).keepYoungGenerationSize()
    const kept = []
    for (let round = 0; round < 40; round++) {
      const batch = []
      for (let i = 0; i < 100000; i++) batch.push({ i, s: 'x' + i })
      kept.push(batch)
      if (kept.length > 3) kept.shift()
    }
    const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')
    console.log(young.space_size / 1048576)`
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  return Number(out.trim())
}

describe('keepYoungGenerationSize', () => {
  it('stops V8 growing the young generation in a running process', () => {
    expect(youngGenerationAfterChurn(false)).toBeGreaterThanOrEqual(16)
    expect(youngGenerationAfterChurn(true)).toBeLessThanOrEqual(4)
  })
})

/**
 * MB of array buffers after dropping 48 MB of buffers and calling releaseDeadBuffers(liveMb), in a
 * fresh Node: at once, and once freed ones are swept (V8 sweeps them on a background thread; up to 2 s).
 */
function arrayBuffersAfterRelease(enable: boolean, liveMb: number): { now: number; swept: number } {
  const script = `
    const heap = await import(${JSON.stringify(heapModule)})
    if (${enable}) heap.enableDeadBufferRelease()
    let held = Array.from({ length: 48 }, () => Buffer.alloc(1024 * 1024, 1))
    held = undefined
    heap.releaseDeadBuffers(${liveMb} * 1024 * 1024)
    const mb = () => process.memoryUsage().arrayBuffers / 1048576
    const now = mb()
    for (let waited = 0; mb() >= 8 && waited < 2000; waited += 20) await new Promise((r) => setTimeout(r, 20))
    console.log(JSON.stringify({ now, swept: mb() }))`
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  return JSON.parse(out) as { now: number; swept: number }
}

describe('releaseDeadBuffers', () => {
  it('collects dead buffers beyond the live bytes and the allowance, once the CLI enabled it', () => {
    expect(arrayBuffersAfterRelease(true, 0).swept).toBeLessThan(8)
    // 48 MB dead is within 32 MB live + the 32 MB allowance: no collection
    expect(arrayBuffersAfterRelease(true, 32).now).toBeGreaterThanOrEqual(48)
    // not enabled (the programmatic API): never collects
    expect(arrayBuffersAfterRelease(false, 0).now).toBeGreaterThanOrEqual(48)
  })
})
