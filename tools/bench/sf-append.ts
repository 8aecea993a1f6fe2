/**
 * @skippr/sf slot benchmark (issue 2, section 4), each part beside its raw limit in the same run and on
 * the same file system:
 *
 *  (a) durable append throughput ('append' durability, one appender awaiting each append) for 1 KiB,
 *      64 KiB and 1 MiB frames vs a raw loop of positional write + fdatasync of the same sizes into a
 *      growing file. Target ≥ 0.9× at 64 KiB and 1 MiB. The raw loop over preallocated blocks is printed
 *      too: it is what the slot's zero-filled segments aim at.
 *  (b) durable 1 KiB frames/s with many concurrent appenders (group commit). Target ≥ 100,000/s.
 *  (c) time to reopen (recover) a slot holding SKIPPR_BENCH_REOPEN_MIB of 1 KiB frames, warm page cache.
 *      Target ≤ 1 s per GiB.
 *
 * Needs the built package: pnpm turbo run build --filter=@skippr/sf
 * Run:  cd tools/bench && pnpm sf-append
 * Env:  SKIPPR_BENCH_SECONDS      seconds per measurement (default 2)
 *       SKIPPR_BENCH_REOPEN_MIB   slot size for (c) (default 1024)
 *       SKIPPR_BENCH_DIR          where the temporary data goes (default: the OS temp dir)
 */
import * as fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { openSlot } from '@skippr/sf'

const KiB = 1024
const MiB = 1024 * KiB
const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback)
const SECONDS = env('SKIPPR_BENCH_SECONDS', 2)
const quiet = { info() {}, warn: console.warn, error: console.error }

interface Rate {
  ops: number
  seconds: number
}

const perSecond = (r: Rate): number => r.ops / r.seconds
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US')
const mbps = (r: Rate, size: number): string => `${fmt((perSecond(r) * size) / 1e6)} MB/s`

/** Runs `step` until SECONDS have passed (at least `minOps` times). */
async function timed(step: (i: number) => Promise<unknown>, minOps = 20): Promise<Rate> {
  const start = performance.now()
  let ops = 0
  while (ops < minOps || performance.now() - start < SECONDS * 1000) await step(ops++)
  return { ops, seconds: (performance.now() - start) / 1000 }
}

async function rawWriteSync(dir: string, size: number, preallocate: boolean): Promise<Rate> {
  const file = path.join(dir, `raw-${size}-${preallocate}`)
  const fh = await fsp.open(file, 'w+')
  const buf = Buffer.alloc(size, 7)
  const span = Math.max(64 * MiB, size * 64)
  if (preallocate) {
    const zeros = Buffer.alloc(MiB)
    for (let pos = 0; pos < span; pos += MiB) await fh.write(zeros, 0, MiB, pos)
    await fh.datasync()
  }
  const rate = await timed(async (i) => {
    await fh.write(buf, 0, size, (i * size) % span)
    await fh.datasync()
  })
  await fh.close()
  await fsp.rm(file)
  return rate
}

async function slotSequential(dir: string, size: number): Promise<Rate> {
  const sfDir = await fsp.mkdtemp(path.join(dir, 'slot-'))
  const slot = await openSlot({ sfDir, durability: 'append', maxTotalBytes: 64 * 1024 * MiB, logger: quiet })
  const buf = Buffer.alloc(size, 7)
  let acked = 0n
  const rate = await timed(async () => {
    const fsn = await slot.append(buf)
    // keep the slot small like a forwarding sender would; acks are off the measured path's critical work
    if (fsn - acked >= 256n) {
      acked = fsn
      void slot.ack(fsn)
    }
  })
  await slot.close()
  await fsp.rm(sfDir, { recursive: true })
  return rate
}

async function groupCommit(dir: string, appenders: number): Promise<Rate> {
  const sfDir = await fsp.mkdtemp(path.join(dir, 'slot-'))
  const slot = await openSlot({ sfDir, durability: 'append', maxTotalBytes: 64 * 1024 * MiB, logger: quiet })
  const buf = Buffer.alloc(KiB, 7)
  const until = performance.now() + SECONDS * 1000
  const start = performance.now()
  let ops = 0
  let acked = 0n
  const appender = async (): Promise<void> => {
    while (performance.now() < until) {
      const fsn = await slot.append(buf)
      ops++
      if (fsn - acked >= 50_000n) {
        acked = fsn
        void slot.ack(fsn)
      }
    }
  }
  await Promise.all(Array.from({ length: appenders }, appender))
  const rate = { ops, seconds: (performance.now() - start) / 1000 }
  const { syncs } = slot.stats()
  await slot.close()
  await fsp.rm(sfDir, { recursive: true })
  console.log(`    ${appenders} appenders: ${fmt(perSecond(rate))} frames/s, ${fmt(ops / Math.max(1, syncs))} frames per fdatasync`)
  return rate
}

async function reopen(dir: string, mib: number): Promise<number> {
  const sfDir = await fsp.mkdtemp(path.join(dir, 'slot-'))
  const options = { sfDir, maxTotalBytes: 2 * mib * MiB + 64 * MiB, logger: quiet }
  let slot = await openSlot({ ...options, durability: 'memory' })
  const buf = Buffer.alloc(KiB, 7)
  const frames = (mib * MiB) / (KiB + 8)
  for (let i = 0; i < frames; i += 1000) {
    await Promise.all(Array.from({ length: Math.min(1000, frames - i) }, () => slot.append(buf)))
  }
  const { segments, publishedFsn } = slot.stats()
  await slot.close()
  const start = performance.now()
  slot = await openSlot(options)
  const seconds = (performance.now() - start) / 1000
  if (slot.publishedFsn !== publishedFsn) throw new Error(`reopen lost frames: ${slot.publishedFsn} of ${publishedFsn}`)
  await slot.close()
  await fsp.rm(sfDir, { recursive: true })
  console.log(`    ${mib} MiB, ${fmt(Number(publishedFsn))} frames of 1 KiB in ${segments} segments`)
  return seconds
}

async function main(): Promise<void> {
  const dir = await fsp.mkdtemp(path.join(process.env.SKIPPR_BENCH_DIR ?? os.tmpdir(), 'skippr-bench-sf-'))
  console.log(`@skippr/sf append bench — node ${process.version}, ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)}`)
  try {
    console.log('(a) durable append, one appender, vs raw write + fdatasync (growing file)')
    for (const size of [KiB, 64 * KiB, MiB]) {
      const grow = await rawWriteSync(dir, size, false)
      const prealloc = await rawWriteSync(dir, size, true)
      const slot = await slotSequential(dir, size)
      const label = size >= MiB ? `${size / MiB} MiB` : `${size / KiB} KiB`
      console.log(
        `    ${label.padStart(6)}: slot ${fmt(perSecond(slot))}/s (${mbps(slot, size)}), raw ${fmt(perSecond(grow))}/s ` +
          `(${mbps(grow, size)}), ratio ${(perSecond(slot) / perSecond(grow)).toFixed(2)}×; raw over preallocated ` +
          `blocks ${fmt(perSecond(prealloc))}/s (slot ${(perSecond(slot) / perSecond(prealloc)).toFixed(2)}× of it)`,
      )
    }

    console.log('(b) durable 1 KiB frames with concurrent appenders (group commit), target ≥ 100,000/s')
    const raw1k = await rawWriteSync(dir, KiB, false)
    console.log(`    raw write + fdatasync of 1 KiB: ${fmt(perSecond(raw1k))}/s`)
    let best = 0
    for (const appenders of [16, 256, 1024]) best = Math.max(best, perSecond(await groupCommit(dir, appenders)))
    console.log(`    best ${fmt(best)} frames/s = ${(best / perSecond(raw1k)).toFixed(1)}× raw 1 KiB syncs`)

    const mib = env('SKIPPR_BENCH_REOPEN_MIB', 1024)
    console.log(`(c) reopen (recovery scan), warm page cache, target ≤ 1 s per GiB`)
    const seconds = await reopen(dir, mib)
    console.log(`    reopen ${seconds.toFixed(2)} s = ${(seconds / (mib / 1024)).toFixed(2)} s per GiB`)
  } finally {
    await fsp.rm(dir, { recursive: true, force: true })
  }
}

await main()
