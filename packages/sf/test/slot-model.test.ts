/**
 * Property: for random sequences of appends, acks, process kills and power losses, what reopens equals
 * what was durable. The disk is SimFs (a page cache in front of a simulated disk), so a crash can strike
 * between any two I/O calls and lose or tear every unsynced write.
 *
 * After each crash and reopen:
 *  - every append that resolved is there, byte-identical, at its FSN (unless acked);
 *  - every frame replayed is one that was appended, byte-identical, in append order;
 *  - ackedFsn did not fall below an ack that resolved;
 *  - the next FSN is above every FSN ever handed out.
 * A second model runs with frames around IN_PLACE_BYTES, which are written from their payload pieces by
 * vectored writes that a crash may tear anywhere. SKIPPR_SF_PROPERTY_RUNS sets the number of runs of each
 * (default 40).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Slot } from '../src/base-slot.js'
import { IN_PLACE_BYTES } from '../src/group-commit.js'
import { openSlot } from '../src/slot.js'
import { captureLogger, collect, tmpSfDir } from './support/helpers.js'
import { SimFs } from './support/sim-fs.js'

const RUNS = Number(process.env.SKIPPR_SF_PROPERTY_RUNS ?? 40)

type Action =
  | { kind: 'append'; count: number; size: number; split: number }
  | { kind: 'ack'; fraction: number }
  | { kind: 'settle' }
  | { kind: 'hop'; n: number }
  | { kind: 'crash'; powerLoss: boolean }

/** The frame sizes and segment size of one model. */
interface Shape {
  size: fc.Arbitrary<number>
  segmentBytes: number
}

const small: Shape = { size: fc.integer({ min: 0, max: 300 }), segmentBytes: 512 }
const large: Shape = {
  size: fc.oneof(
    fc.integer({ min: 0, max: 300 }),
    fc.integer({ min: IN_PLACE_BYTES - 8, max: 3 * IN_PLACE_BYTES }),
  ),
  segmentBytes: 4 * IN_PLACE_BYTES,
}

const action = (shape: Shape): fc.Arbitrary<Action> =>
  fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant('append' as const),
        count: fc.integer({ min: 1, max: 12 }),
        size: shape.size,
        // Where the payload is cut in two pieces (0: appended whole).
        split: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('ack' as const),
        fraction: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
    },
    { weight: 2, arbitrary: fc.constant({ kind: 'settle' as const }) },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant('hop' as const), n: fc.integer({ min: 1, max: 20 }) }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash' as const), powerLoss: fc.boolean() }) },
  )

const actions = (shape: Shape): fc.Arbitrary<Action[]> =>
  fc.array(action(shape), { minLength: 1, maxLength: 40 })

/** Payload: a 4-byte id, then bytes derived from it. */
function makePayload(id: number, size: number): Buffer {
  const b = Buffer.alloc(4 + size)
  b.writeUInt32LE(id, 0)
  for (let i = 4; i < b.length; i++) b[i] = (id * 7 + i * 13) & 0xff
  return b
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

class Model {
  /** FSN → payload of frames known durable (resolved appends, and frames seen after a reopen). */
  durable = new Map<bigint, Buffer>()
  payloads = new Map<number, Buffer>()
  ackResolved = 0n
  maxFsnEver = 0n
  nextId = 1
  pending: Array<Promise<unknown>> = []
}

async function run(actions: Action[], seed: number, segments: number, shape: Shape): Promise<void> {
  const sfDir = await tmpSfDir()
  const rng = mulberry32(seed)
  let sim = new SimFs(rng)
  const open = (): Promise<Slot> =>
    openSlot({
      sfDir,
      io: sim,
      maxSegmentBytes: shape.segmentBytes,
      maxTotalBytes: shape.segmentBytes * segments,
      logger: captureLogger(),
    })
  let slot = await open()
  const m = new Model()

  for (const a of actions) {
    if (a.kind === 'append') {
      for (let i = 0; i < a.count; i++) {
        const id = m.nextId++
        const p = makePayload(id, a.size)
        m.payloads.set(id, p)
        const cut = Math.floor(a.split * p.length)
        m.pending.push(
          slot.append(cut === 0 ? p : [p.subarray(0, cut), p.subarray(cut)]).then((fsn) => {
            m.durable.set(fsn, p)
            if (fsn > m.maxFsnEver) m.maxFsnEver = fsn
          }, noop),
        )
      }
    } else if (a.kind === 'ack') {
      const target =
        slot.ackedFsn + BigInt(Math.floor(Number(slot.publishedFsn - slot.ackedFsn) * a.fraction))
      m.pending.push(
        slot.ack(target).then(() => {
          if (target > m.ackResolved) m.ackResolved = target
        }, noop),
      )
    } else if (a.kind === 'settle') {
      await Promise.all(m.pending.splice(0))
    } else if (a.kind === 'hop') {
      for (let i = 0; i < a.n; i++) await Promise.resolve()
    } else {
      sim = a.powerLoss ? sim.crash() : sim.kill()
      await slot.close().catch(noop) // the old view fails every call now; this only releases the lock
      await Promise.all(m.pending.splice(0))
      slot = await open()
      await verify(slot, m)
    }
  }
  await Promise.all(m.pending.splice(0))
  await slot.close()
  slot = await open()
  await verify(slot, m)
  await slot.close()
}

async function verify(slot: Slot, m: Model): Promise<void> {
  expect(slot.ackedFsn).toBeGreaterThanOrEqual(m.ackResolved)
  const frames = await collect(slot.replay())
  let lastId = 0
  let lastFsn = 0n
  for (const f of frames) {
    expect(f.fsn).toBeGreaterThan(lastFsn)
    lastFsn = f.fsn
    const id = Buffer.from(f.payload).readUInt32LE(0)
    expect(Buffer.from(f.payload).equals(m.payloads.get(id)!), `frame ${f.fsn} (id ${id}) bytes`).toBe(true)
    expect(id, 'append order').toBeGreaterThan(lastId)
    lastId = id
    const known = m.durable.get(f.fsn)
    if (known) expect(known.equals(Buffer.from(f.payload)), `frame ${f.fsn} is the one resolved`).toBe(true)
  }
  const present = new Set(frames.map((f) => f.fsn))
  for (const fsn of m.durable.keys()) {
    if (fsn > slot.ackedFsn) expect(present.has(fsn), `durable frame ${fsn} survived`).toBe(true)
  }
  // What reopened is durable now; acked frames may go.
  for (const f of frames) m.durable.set(f.fsn, Buffer.from(f.payload))
  for (const fsn of [...m.durable.keys()]) if (fsn <= slot.ackedFsn) m.durable.delete(fsn)
  if (slot.publishedFsn > m.maxFsnEver) m.maxFsnEver = slot.publishedFsn
  // FSNs never go backwards.
  const probe = makePayload(m.nextId++, 1)
  m.payloads.set(m.nextId - 1, probe)
  const fsn = await slot.append(probe).catch(async (e) => {
    if (e.code !== 'SF_BACKPRESSURE') throw e
    await slot.ack(slot.publishedFsn) // full: make room the way a sender would
    m.ackResolved = slot.publishedFsn
    m.durable.clear()
    return slot.append(probe)
  })
  expect(fsn).toBeGreaterThan(m.maxFsnEver)
  m.durable.set(fsn, probe)
  m.maxFsnEver = fsn
}

function noop(): void {}

describe('slot model', () => {
  it.each([
    ['small frames', small],
    ['frames written from their payload pieces', large],
  ])(
    'reopens exactly what was durable, across random appends, acks and crashes (%s)',
    async (_name, shape) => {
      await fc.assert(
        fc.asyncProperty(
          actions(shape),
          fc.integer(),
          // a tight budget exercises backpressure and segment recycling; a roomy one long logs
          fc.constantFrom(16, 1024),
          (list, seed, segments) => run(list, seed, segments, shape),
        ),
        { numRuns: RUNS },
      )
    },
    120_000,
  )
})
