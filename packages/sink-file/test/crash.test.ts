/**
 * SIGKILL at random moments while batch files are written: every visible file is whole, and after
 * restarting from the last acknowledged batch every row is there once. Rounds: SKIPPR_CRASH_ROUNDS.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { afterAll, expect, it } from 'vitest'

const ROUNDS = Number(process.env.SKIPPR_CRASH_ROUNDS ?? 3)
const BATCHES = 12
const PER_BATCH = 5_000
const fixture = path.join(import.meta.dirname, 'fixtures', 'write-batches.mjs')
const dir = await mkdtemp(path.join(tmpdir(), 'skippr-file-crash-'))
const out = path.join(dir, 'out', 'crash')
afterAll(() => rm(dir, { recursive: true, force: true }))

async function runWriter(from: number, killAfterMs?: number): Promise<{ acked: number; killed: boolean }> {
  const args = [fixture, dir, String(from), String(BATCHES), String(PER_BATCH)]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  )
  let acked = from - 1
  for await (const line of createInterface({ input: child.stdout })) {
    if (line === 'ready' && killAfterMs !== undefined) setTimeout(() => child.kill('SIGKILL'), killAfterMs)
    const [status, seq] = line.split(' ')
    // A batch that landed just before the kill is found whole by the rerun: already-landed.
    if (status === 'landed' || status === 'already-landed') acked = Number(seq)
    else if (line !== 'ready') throw new Error(`writer: ${line}`)
  }
  return { acked, killed: (await exited) === 'SIGKILL' }
}

/** The ids in every visible file; each file must hold a whole batch. */
async function visibleIds(): Promise<number[]> {
  const ids: number[] = []
  // None yet when the writer was killed before its first file.
  const entries = await readdir(out, { recursive: true, withFileTypes: true }).catch(() => [])
  for (const entry of entries.filter((e) => e.isFile() && !e.name.startsWith('.'))) {
    const name = path.join(entry.parentPath, entry.name)
    const lines = (await readFile(name, 'utf8')).split('\n').filter(Boolean)
    expect(lines, name).toHaveLength(PER_BATCH)
    for (const line of lines) ids.push((JSON.parse(line) as { id: number }).id)
  }
  return ids
}

it(`every file whole and every row once after ${ROUNDS} SIGKILLs during writes`, {
  timeout: 30_000 + ROUNDS * 10_000,
}, async () => {
  let acked = 0
  let kills = 0
  for (let round = 0; round < ROUNDS && acked < BATCHES; round++) {
    const run = await runWriter(acked + 1, Math.floor(Math.random() * 300))
    acked = run.acked
    if (run.killed) kills++
    await visibleIds()
  }
  expect(kills).toBeGreaterThan(0)
  expect(await runWriter(acked + 1)).toEqual({ acked: BATCHES, killed: false })
  const ids = await visibleIds()
  expect(ids).toHaveLength(BATCHES * PER_BATCH)
  expect(new Set(ids).size).toBe(BATCHES * PER_BATCH)
})
