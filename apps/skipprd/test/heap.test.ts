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
