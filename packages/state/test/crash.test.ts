import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, expect, it } from 'vitest'
import { openStateStore, type StateStore } from '../src/index.js'
import { seqOf } from './fixtures/offsets.js'
import { Child, tempDataDir } from './helpers.js'

/** Kill rounds; raise SKIPPR_STATE_CRASH_ROUNDS for a longer run. */
const ROUNDS = Number(process.env.SKIPPR_STATE_CRASH_ROUNDS ?? 8)

const opened: StateStore[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()))
})

it(
  `a writer SIGKILLed at random moments ${ROUNDS} times leaves a complete value it wrote, while a reader reads on`,
  async () => {
    const dataDir = await tempDataDir()
    const store = await openStateStore({ dataDir, workspace: 'test' })
    opened.push(store)
    const p = store.pipeline('p')
    const reader = new Child(['reader', dataDir, 'p'])
    let durable = 0
    let lastToken = 0n

    for (let round = 0; round < ROUNDS; round++) {
      const writer = new Child(['writer', dataDir, 'p'])
      // The restarted writer's own reopen finds a whole value, no older than any commit it was told of.
      const start = await writer.next('start')
      expect(start.valid).toBe(true)
      expect(start.seq).toBeGreaterThanOrEqual(durable)
      // It takes over the lease the killed writer still held, with a greater token.
      const token = BigInt((await writer.next('leased')).token as string)
      expect(token).toBeGreaterThan(lastToken)
      lastToken = token

      await writer.next('committed')
      await sleep(Math.random() * 150)
      writer.kill('SIGKILL')
      await writer.exited
      const committed = writer.drain().filter((r) => r.event === 'committed')
      durable = Math.max(durable, ...committed.map((r) => r.seq as number))

      const seq = seqOf(await p.getResumeOffset())
      expect(seq).toBeDefined()
      expect(seq).toBeGreaterThanOrEqual(durable)
    }

    reader.send('stop')
    const summary = await reader.next('summary')
    expect(summary).toMatchObject({ invalid: 0, backwards: 0 })
    expect(summary.reads).toBeGreaterThan(ROUNDS)
    expect(summary.last).toBeGreaterThan(0)
  },
  20_000 + ROUNDS * 5_000,
)
