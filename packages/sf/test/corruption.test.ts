/**
 * Corruption: random byte flips, truncations, zeroed and garbage ranges in segment files and the
 * watermark never crash the process and never yield a frame whose bytes differ from what was written.
 * Opening may refuse with an SF_* error; otherwise every replayed frame is the original one at its FSN,
 * and the slot accepts new appends. SKIPPR_SF_CORRUPTION_RUNS sets the number of runs (default 60).
 */
import { cp, readdir, readFile, truncate, writeFile } from 'node:fs/promises'
import path from 'node:path'
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { openSlot } from '../src/slot.js'
import { appendAll, captureLogger, payload, tmpSfDir } from './support/helpers.js'

const RUNS = Number(process.env.SKIPPR_SF_CORRUPTION_RUNS ?? 60)
const opts = { maxSegmentBytes: 2048, maxTotalBytes: 64 * 2048 }
const payloads = Array.from({ length: 60 }, (_, i) => payload(i + 1, 20 + ((i * 37) % 150)))

type Mutation =
  | { kind: 'flip'; file: number; at: number; mask: number }
  | { kind: 'truncate'; file: number; at: number }
  | { kind: 'zero' | 'garbage'; file: number; at: number; length: number; seed: number }

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant('flip' as const),
    file: fc.nat(),
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    mask: fc.integer({ min: 1, max: 255 }),
  }),
  fc.record({
    kind: fc.constant('truncate' as const),
    file: fc.nat(),
    at: fc.double({ min: 0, max: 1, noNaN: true }),
  }),
  fc.record({
    kind: fc.constantFrom('zero' as const, 'garbage' as const),
    file: fc.nat(),
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    length: fc.integer({ min: 1, max: 600 }),
    seed: fc.nat(),
  }),
)

let pristine = ''

beforeAll(async () => {
  pristine = await tmpSfDir()
  const slot = await openSlot({ sfDir: pristine, ...opts })
  await appendAll(slot, payloads)
  await slot.ack(5n)
  await slot.close()
})

async function mutate(dir: string, m: Mutation): Promise<void> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.sfa') || n === '.ack-watermark').sort()
  if (names.length === 0) return
  const file = path.join(dir, names[m.file % names.length]!)
  const bytes = await readFile(file)
  const at = Math.floor(m.at * bytes.length)
  if (m.kind === 'truncate') return truncate(file, at)
  if (m.kind === 'flip') {
    if (at < bytes.length) bytes[at]! ^= m.mask
  } else {
    for (let i = at; i < Math.min(bytes.length, at + m.length); i++)
      bytes[i] = m.kind === 'zero' ? 0 : (m.seed * 31 + i * 17) & 0xff
  }
  await writeFile(file, bytes)
}

describe('corruption', () => {
  it('never crashes and never yields wrong bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 4 }), async (mutations) => {
        const sfDir = await tmpSfDir()
        await cp(pristine, sfDir, { recursive: true })
        for (const m of mutations) await mutate(path.join(sfDir, 'default'), m)
        let slot: Awaited<ReturnType<typeof openSlot>>
        try {
          slot = await openSlot({ sfDir, ...opts, logger: captureLogger() })
        } catch (e) {
          expect((e as { code?: string }).code).toMatch(/^SF_(SEGMENT_GAP|SLOT_CORRUPT)$/)
          return
        }
        let last = 0n
        for await (const f of slot.replay()) {
          expect(f.fsn).toBeGreaterThan(last)
          last = f.fsn
          expect(Buffer.from(f.payload).equals(payloads[Number(f.fsn) - 1]!), `frame ${f.fsn}`).toBe(true)
        }
        const fsn = await slot.append(payload(999))
        expect(fsn).toBeGreaterThan(last)
        await slot.close()
      }),
      { numRuns: RUNS },
    )
  }, 120_000)
})
