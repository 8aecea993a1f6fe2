/**
 * Where a `node --cpu-prof` run spent its time: self time per function, summed over every
 * .cpuprofile in a directory (one per thread), biggest first.
 */
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}

interface Profile {
  readonly nodes: readonly ProfileNode[]
  readonly samples: readonly number[]
  /** Microseconds since the previous sample. */
  readonly timeDeltas: readonly number[]
}

export interface SelfTime {
  readonly name: string
  readonly ms: number
  readonly share: number
}

export async function topSelfTimes(dir: string, count: number): Promise<SelfTime[]> {
  const byName = new Map<string, number>()
  let totalUs = 0
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(await readFile(path.join(dir, file), 'utf8')) as Profile
    const names = new Map(profile.nodes.map((node) => [node.id, frameName(node.callFrame)]))
    for (const [i, id] of profile.samples.entries()) {
      const us = profile.timeDeltas[i] ?? 0
      const name = names.get(id) ?? '?'
      byName.set(name, (byName.get(name) ?? 0) + us)
      totalUs += us
    }
  }
  return [...byName]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, us]) => ({ name, ms: us / 1000, share: us / totalUs }))
}

/** `fn (package/file.js:line)`, with paths cut to what names the code. */
function frameName(frame: ProfileNode['callFrame']): string {
  const fn = frame.functionName || '(anonymous)'
  if (!frame.url) return fn
  const file = frame.url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*\/(apps|packages)\//, '')
  return `${fn} (${file}:${frame.lineNumber + 1})`
}
