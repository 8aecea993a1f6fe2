/**
 * Real-process crash test: a child commits and lands batches while this process SIGKILLs it at a random
 * moment, then checks the WAL it left behind against the child's journal. SKIPPR_WAL_CRASH_ROUNDS sets the
 * number of kills (small by default; the nightly/bench runs use hundreds).
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import * as fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type BatchIdentity, openWal, type WalBatch } from '../src/index.js'
import { digested, makeBatch, offsetK, SMALL_FILE_BYTES } from './support/batches.js'
import { filePositions } from './support/positions.js'

const ROUNDS = Number(process.env.SKIPPR_WAL_CRASH_ROUNDS ?? 16)
const CHILD = fileURLToPath(new URL('./fixtures/crash-child.ts', import.meta.url))

let dir: string
beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'skippr-wal-crash-'))
})
afterAll(async () => {
  await fsp.rm(dir, { recursive: true, force: true })
})

interface Journal {
  ready: number | undefined
  /** Highest k per event: commit begun / done, landing begun / done (0 when none). */
  cb: number
  cd: number
  lb: number
  ld: number
}

it(`keeps exactly the committed, unlanded batches across ${ROUNDS} SIGKILLs`, async () => {
  const dataDir = path.join(dir, 'data')
  const positionsFile = path.join(dir, 'positions.json')
  const open = () =>
    openWal({
      pipeline: 'crash',
      dataDir,
      bytesPerFile: SMALL_FILE_BYTES,
      positions: filePositions(positionsFile),
    })
  // What must hold: batches 1..landed landed, landed+1..committed pending.
  let landed = 0
  let committed = 0
  const ids = new Map<number, BatchIdentity>()
  const epochs = new Set<string>()
  let fromPositions = 0
  const windows = { midCommit: 0, midMultiFrameCommit: 0, midLanding: 0 }

  for (let round = 1; round <= ROUNDS; round++) {
    const seed = (Date.now() + round * 7919) >>> 0
    const context = `round ${round} (seed ${seed})`
    const journalFile = path.join(dir, `journal-${round}`)
    const stderr = await runAndKill([dataDir, positionsFile, journalFile, String(seed)], journalFile)
    const j = readJournal(journalFile)
    if (j.ready !== undefined) expect(j.ready, `${context}: child resumed from`).toBe(committed)

    const wal = await open()
    const pending: WalBatch[] = []
    for await (const b of wal.pending()) pending.push(b)
    const resume = offsetK(await wal.resumeOffset())
    const ks = pending.map((b) => offsetK(b.offset))
    const nowCommitted = ks.length > 0 ? ks[ks.length - 1]! : resume
    const nowLanded = ks.length > 0 ? ks[0]! - 1 : nowCommitted
    const state = `${context}: pending ${ks.join(',') || 'none'}, resume ${resume}, journal ${JSON.stringify(j)}, stderr ${stderr}`

    expect(ks, state).toEqual(Array.from({ length: ks.length }, (_, i) => nowLanded + 1 + i))
    expect(resume, state).toBe(nowCommitted)
    // Never past a committed batch, never behind one: between "commit done" and "commit begun".
    expect(nowCommitted, state).toBeGreaterThanOrEqual(Math.max(committed, j.cd))
    expect(nowCommitted, state).toBeLessThanOrEqual(Math.max(committed, j.cb))
    // A batch is gone from the WAL only if it was landed; a landed one never comes back.
    expect(nowLanded, state).toBeGreaterThanOrEqual(Math.max(landed, j.ld))
    expect(nowLanded, state).toBeLessThanOrEqual(Math.max(landed, j.lb))
    for (const b of pending) {
      const k = offsetK(b.offset)
      expect(digested(b), `${context}: batch ${k} bytes`).toEqual(digested(makeBatch(k)))
      expect(b.id, `${context}: batch ${k} identity`).toEqual(ids.get(k) ?? b.id)
      ids.set(k, b.id)
      epochs.add(b.id.epoch)
    }
    if (j.cb > j.cd) windows.midCommit++
    if (j.cb > j.cd && makeBatch(j.cb).parts.some((p) => p.body.length > SMALL_FILE_BYTES))
      windows.midMultiFrameCommit++
    if (j.lb > j.ld) windows.midLanding++
    committed = nowCommitted
    landed = nowLanded

    // Every few rounds the "sink" lands everything and stops cleanly, so every file is trimmed and the
    // resume offset (here, and for the next child) can only come from positions.
    if (round % 4 === 0) {
      for (const b of pending) await wal.markLanded(b.id)
      landed = committed
    }
    await wal.close()
    if (round % 4 === 0) {
      // An open drops the frames of a commit the kill cut short; closing a fully landed WAL trims all.
      await (await open()).close()
      const segments = (await fsp.readdir(path.join(dataDir, 'wal', 'crash'))).filter((n) =>
        n.endsWith('.sfa'),
      )
      expect(segments, `${context}: files left after a full drain`).toEqual([])
      const reopened = await open()
      expect(offsetK(await reopened.resumeOffset()), `${context}: resume from positions`).toBe(committed)
      await reopened.close()
      fromPositions++
    }
  }
  console.info(
    `crash test: ${ROUNDS} kills, ${JSON.stringify(windows)}, ${fromPositions} resumed from positions`,
  )
  expect(epochs.size).toBeLessThanOrEqual(1)
}, 600_000)

/** Runs the child and SIGKILLs it at a random moment, mostly after it opened the WAL. Returns its stderr. */
async function runAndKill(args: string[], journalFile: string): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  if (Math.random() < 0.85) {
    const started = Date.now()
    while (!journalHasReady(journalFile) && child.exitCode === null && Date.now() - started < 30_000)
      await sleep(5)
    await sleep(Math.random() * 300)
  } else {
    await sleep(Math.random() * 600)
  }
  const alive = child.exitCode === null
  child.kill('SIGKILL')
  const code = await exited
  if (!alive || code !== null) throw new Error(`the child exited by itself (code ${code}): ${stderr}`)
  return stderr.trim().slice(0, 400)
}

function journalHasReady(file: string): boolean {
  return existsSync(file) && readFileSync(file, 'utf8').startsWith('ready')
}

function readJournal(file: string): Journal {
  const j: Journal = { ready: undefined, cb: 0, cd: 0, lb: 0, ld: 0 }
  if (!existsSync(file)) return j
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [event, k] = line.split(' ')
    if (event === 'ready') j.ready = Number(k)
    else if (event === 'cb' || event === 'cd' || event === 'lb' || event === 'ld') j[event] = Number(k)
  }
  return j
}
