/**
 * Real processes killed with SIGKILL: a sender killed and restarted on the same slot, and a receiver killed
 * and restarted on the same delivery file. Either way the application sees every record exactly once, in
 * order. Rounds: SKIPPR_SF_SENDER_CRASH_ROUNDS (default 3).
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Sender } from '../src/sender.js'
import { type Child, runFixture } from './support/child.js'
import { freePort, recordingReceiver } from './support/harness.js'
import { tmpSfDir } from './support/helpers.js'

const ROUNDS = Number(process.env.SKIPPR_SF_SENDER_CRASH_ROUNDS ?? 3)
const cleanups: Array<() => Promise<unknown> | unknown> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const randomBetween = (lo: number, hi: number): number => lo + Math.floor(Math.random() * (hi - lo))

function expectRecords(lines: string[], total: number): void {
  expect(lines.length).toBe(total)
  lines.forEach((line, i) => {
    if (line !== `rec-${i + 1}`) throw new Error(`position ${i + 1} holds ${line}: duplicate, gap or reorder`)
  })
}

describe('sender and receiver crash safety with real processes', () => {
  it(`delivers exactly once when the sender is SIGKILLed ${ROUNDS} times and restarted on its slot`, async () => {
    const rec = await recordingReceiver()
    cleanups.push(() => rec.receiver.close())
    const sfDir = await tmpSfDir()
    const total = 1000 * (ROUNDS + 1)
    // Paced (5 ms per 20 records, about a second per 4,000) so every kill lands mid-run, however fast the machine.
    const start = (pauseMs: number): Child => {
      const child = runFixture('crash-sender.ts', [rec.addr, sfDir, 'crashy', String(total), String(pauseMs)])
      cleanups.push(() => child.kill())
      return child
    }
    const delivered = (): number => rec.of('crashy').length
    for (let round = 0; round < ROUNDS; round++) {
      const before = delivered()
      const child = start(5)
      // Kill at a random moment after this child has delivered something.
      while (delivered() === before && child.process.exitCode === null) await pause(5)
      await pause(randomBetween(0, 300))
      await child.kill()
    }
    expect(delivered()).toBeLessThan(total)
    const last = start(0)
    await last.printed('done')
    await last.exited
    expectRecords(rec.of('crashy'), total)
    const fsns = rec.got.filter((g) => g.senderId === 'crashy').map((g) => g.fsn)
    expect(fsns).toEqual(Array.from({ length: total }, (_, i) => BigInt(i + 1)))
  }, 60_000)

  it(`delivers exactly once when the receiver is SIGKILLed ${ROUNDS} times and restarted`, async () => {
    const sfDir = await tmpSfDir()
    const port = await freePort()
    const file = path.join(sfDir, 'delivered.log')
    const startReceiver = async (): Promise<Child> => {
      const child = runFixture('crash-receiver.ts', [String(port), file])
      cleanups.push(() => child.kill())
      await child.printed('listening')
      return child
    }
    let receiver = await startReceiver()
    const sender = await Sender.fromConfig(
      `ws::addr=127.0.0.1:${port};sf_dir=${sfDir};sender_id=steady;` +
        'reconnect_initial_backoff_millis=20;reconnect_max_backoff_millis=100;',
      { onError: () => {} },
    )
    cleanups.push(() => sender.close().catch(() => {}))
    const total = 2000
    const sending = (async () => {
      for (let n = 1; n <= total; n += 10) {
        await Promise.all(
          Array.from({ length: 10 }, (_, k) => sender.sendBlocking(Buffer.from(`rec-${n + k}`))),
        )
        if (n % 200 === 1) await pause(5)
      }
    })()
    for (let round = 0; round < ROUNDS; round++) {
      await pause(randomBetween(100, 500))
      await receiver.kill()
      await pause(randomBetween(0, 200))
      receiver = await startReceiver()
    }
    await sending
    await sender.flush()
    expect(sender.counters().totalReconnectsSucceeded).toBeGreaterThanOrEqual(1)
    await sender.close()
    await receiver.kill()
    const lines = (await readFile(file, 'utf8')).split('\n').filter(Boolean)
    expectRecords(
      lines.map((l) => l.split(' ')[2]!),
      total,
    )
    expect(lines.every((l) => l.startsWith('steady '))).toBe(true)
  }, 60_000)
})
