/**
 * Crash test with real processes: a child appends in 'append' durability and reports every resolved FSN;
 * the parent SIGKILLs it at a random moment. After each kill the reopened slot must hold every reported
 * FSN with identical bytes, in order, with no gaps. SKIPPR_SF_CRASH_ROUNDS sets the rounds (default 25).
 *
 * The child runs the built dist with plain node (a round costs milliseconds, not a TypeScript loader);
 * turbo builds the package before its tests (`test` depends on `build`).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { openSlot } from '../src/slot.js'
import { CRASH_SLOT, crashPayload } from './fixtures/crash-payload.mjs'
import { captureLogger, tmpSfDir } from './support/helpers.js'

const ROUNDS = Number(process.env.SKIPPR_SF_CRASH_ROUNDS ?? 25)
const CHILD = fileURLToPath(new URL('./fixtures/crash-child.mjs', import.meta.url))

interface Round {
  reported: Map<bigint, number>
  ackedUpTo: bigint
}

/** Runs the child until it has reported for a random 10..200 ms, then SIGKILLs it. */
async function runChild(sfDir: string, firstId: number, round: Round): Promise<void> {
  const child: ChildProcess = spawn(process.execPath, [CHILD, sfDir, String(firstId)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  )
  let killScheduled = false
  for await (const line of createInterface({ input: child.stdout! })) {
    const [kind, a, b] = line.split(' ')
    if (kind === 'a') round.reported.set(BigInt(a!), Number(b))
    else if (kind === 'k' && BigInt(a!) > round.ackedUpTo) round.ackedUpTo = BigInt(a!)
    if (!killScheduled) setTimeout(() => child.kill('SIGKILL'), 10 + Math.random() * 190)
    killScheduled = true
  }
  expect(await exited).toBe('SIGKILL')
}

describe('SIGKILL crash', () => {
  it(`keeps every reported frame across ${ROUNDS} kills`, async () => {
    const sfDir = await tmpSfDir()
    const round: Round = { reported: new Map(), ackedUpTo: 0n }
    let lastPublished = 0n
    for (let r = 0; r < ROUNDS; r++) {
      await runChild(sfDir, (r + 1) * 1_000_000, round)
      expect(round.reported.size).toBeGreaterThan(0)

      const slot = await openSlot({ sfDir, ...CRASH_SLOT, logger: captureLogger() })
      expect(slot.stats().dataLoss).toEqual([])
      expect(slot.ackedFsn).toBeGreaterThanOrEqual(round.ackedUpTo)
      let expected = slot.ackedFsn + 1n
      for await (const { fsn, payload } of slot.replay()) {
        expect(fsn).toBe(expected++) // in order, no gaps
        const id = Buffer.from(payload).readUInt32LE(0)
        expect(Buffer.from(payload).equals(crashPayload(id))).toBe(true)
        const reportedId = round.reported.get(fsn)
        if (reportedId !== undefined) expect(id).toBe(reportedId)
      }
      expect(expected - 1n).toBe(slot.publishedFsn)
      for (const fsn of round.reported.keys()) {
        if (fsn > slot.ackedFsn) expect(fsn <= slot.publishedFsn, `reported FSN ${fsn} survived`).toBe(true)
      }
      expect(slot.publishedFsn).toBeGreaterThanOrEqual(lastPublished) // FSNs never go backwards
      lastPublished = slot.publishedFsn
      await slot.close()
    }
  }, 600_000)
})
