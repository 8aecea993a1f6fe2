/**
 * Recovery on open, in the seed's order (the lock is already held): scan every segment, order by baseSeq
 * and refuse gaps, read the watermark and reject one above the ceiling, seed ackedFsn, pick the next
 * generation. Pure reading: the slot applies the result (zeroing a torn tail, removing temp files).
 *
 * Scanning a sealed segment reads its header and seal only (segment.ts); every other segment (the one
 * that was active, or one whose seal write was lost) has its frames walked and their CRCs checked. Frames
 * of sealed segments are checked when replay reads them (slot.ts, invariant 8).
 *
 * What a damaged file means:
 *  - invalid frame, only garbage after it: a torn tail (a crash mid-append). Informational; those frames
 *    never resolved, and the slot zeroes the garbage and keeps appending after the last valid frame.
 *  - invalid frame followed by a valid frame, or a segment whose header is unreadable: damage. The frames
 *    from there to the next segment are reported as data loss with their FSN range (exact between two
 *    segments, an upper bound at the end), and new frames start after that bound so an FSN that may have
 *    been used is never reused.
 *  - a gap between a cleanly ended segment and the next one: a segment was removed. Fatal.
 * Ranges at or below the acked watermark were delivered already and are not reported. The highest
 * generation, when its header is all zeros, is the writer's unused spare and is deleted: a segment's header
 * is written with its first frames and synced before any of them is published, so a blank header means
 * nothing in the file was ever published (invariant 2 in slot.ts).
 */

import path from 'node:path'
import { SegmentGapError, SlotCorruptError } from './errors.js'
import { FRAME_HEADER_BYTES, isBlankHeader, parseSegmentFileName, SEGMENT_HEADER_BYTES } from './format.js'
import { readFully, type SlotFs } from './io.js'
import type { SlotLogger } from './logger.js'
import { newSegment, type Segment, type SegmentScan, scanSegment } from './segment.js'
import { readWatermark } from './watermark.js'

export interface DataLossRange {
  fromFsn: bigint
  /** Last FSN of the range; an upper bound when `exact` is false. */
  toFsn: bigint
  exact: boolean
  segment: string
  reason: string
}

export interface Recovered {
  /** Usable segments ordered by baseSeq; `count`/`end` cover their valid frames. */
  segments: Segment[]
  /** The last segment, when new frames may follow its last valid frame; with its torn bytes' extent. */
  appendable: { segment: Segment; tornEnd: number } | undefined
  ackedFsn: bigint
  publishedFsn: bigint
  nextFsn: bigint
  nextGen: bigint
  tornTailBytes: number
  dataLoss: DataLossRange[]
  /** Leftover temporary files (spare segments, watermark temp) to delete. */
  leftovers: string[]
}

const SCAN_CONCURRENCY = 4

interface Readable {
  name: string
  gen: bigint
  scan: SegmentScan
}

interface Unreadable {
  name: string
  gen: bigint
  fileBytes: number
  blankHeader: boolean
  problem: string
}

export async function recoverSlot(io: SlotFs, dir: string, logger: SlotLogger): Promise<Recovered> {
  const names = await io.readdir(dir)
  const { valid, unreadable, spare } = await scanAll(io, dir, names)
  const segments = valid.map(toSegment)
  const last = valid[valid.length - 1]
  const lastSeg = segments[segments.length - 1]

  // Highest FSN that may have been used: the last valid frame, or past it by the most frames that could
  // hide in a damaged tail or in unreadable segments written after it.
  const publishedOnDisk = lastSeg ? lastSeg.baseSeq + BigInt(lastSeg.count) - 1n : 0n
  const unreadableAfterLast = unreadable.filter((f) => !last || f.gen > last.gen)
  const hiddenFrames =
    (last?.scan.damaged ? maxFrames(last.scan.tornEnd - last.scan.end) : 0n) +
    unreadableAfterLast.reduce((sum, f) => sum + maxFrames(f.fileBytes - SEGMENT_HEADER_BYTES), 0n)
  const ceiling = publishedOnDisk + hiddenFrames

  const watermark = await readValidWatermark(io, dir, ceiling, segments.length > 0, logger)
  const lowestBase = segments[0]?.baseSeq
  const ackedFsn = lowestBase === undefined ? (watermark ?? 0n) : max(lowestBase - 1n, watermark ?? 0n)

  const dataLoss: DataLossRange[] = []
  const report = (range: DataLossRange): void => {
    const r = reportDataLoss(dir, range, ackedFsn, logger)
    if (r) dataLoss.push(r)
  }
  for (const f of unreadable) {
    logger.error(`segment ${f.name} in ${dir} has an unusable header (${f.problem}); its frames are lost`)
  }
  for (let i = 0; i + 1 < valid.length; i++) {
    checkJoin(dir, valid[i]!, segments[i]!, valid[i + 1]!, segments[i + 1]!, unreadable, ackedFsn, report)
  }
  if (last && hiddenFrames > 0n) {
    report({
      fromFsn: publishedOnDisk + 1n,
      toFsn: ceiling,
      exact: false,
      segment: unreadableAfterLast[0]?.name ?? last.name,
      reason: last.scan.damaged ? 'damaged frame followed by valid frames' : 'unreadable segment header',
    })
  }

  let tornTailBytes = 0
  for (const f of valid) {
    if (f.scan.tornBytes > 0 && !f.scan.damaged) {
      tornTailBytes += f.scan.tornBytes
      logger.info(`torn tail in ${f.name}: ${f.scan.tornBytes} bytes of an interrupted append discarded`)
    }
  }

  // A sealed segment is never appended to: frames after its seal's count would be invisible to recovery.
  const appendable =
    last && lastSeg && hiddenFrames === 0n && !last.scan.sealed
      ? { segment: lastSeg, tornEnd: last.scan.tornEnd }
      : undefined
  return {
    segments,
    appendable,
    ackedFsn,
    publishedFsn: max(publishedOnDisk, ackedFsn),
    nextFsn: max(ceiling, ackedFsn) + 1n,
    nextGen: [...valid, ...unreadable, ...(spare ? [spare] : [])].reduce((m, f) => max(m, f.gen), 0n) + 1n,
    tornTailBytes,
    dataLoss,
    leftovers: [...names.filter((n) => n.endsWith('.tmp')), ...(spare ? [spare.name] : [])],
  }
}

/**
 * Logs a lost FSN range as an error, without the part at or below `ackedFsn` (delivered already). Returns
 * the reported range, or undefined when nothing of it is unacked.
 */
export function reportDataLoss(
  dir: string,
  range: DataLossRange,
  ackedFsn: bigint,
  logger: SlotLogger,
): DataLossRange | undefined {
  if (range.toFsn <= ackedFsn) return undefined
  const r = { ...range, fromFsn: max(range.fromFsn, ackedFsn + 1n) }
  const to = `${r.exact ? '' : 'at most '}${r.toFsn}`
  logger.error(
    `data loss in slot ${dir}: FSNs ${r.fromFsn}..${to} are unreadable (${r.reason} in ${r.segment})`,
  )
  return r
}

/**
 * Scans every segment file; readable ones come back ordered by baseSeq. The highest generation, when its
 * header is blank, is the writer's unused spare, not a segment.
 */
async function scanAll(
  io: SlotFs,
  dir: string,
  names: string[],
): Promise<{ valid: Readable[]; unreadable: Unreadable[]; spare: Unreadable | undefined }> {
  const valid: Readable[] = []
  const unreadable: Unreadable[] = []
  const queue = names.filter((name) => parseSegmentFileName(name) !== undefined)
  // A few segments at a time: one's CRC work overlaps another's reads.
  const worker = async (): Promise<void> => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      const gen = parseSegmentFileName(name)!
      const scan = await scanSegment(io, dir, name)
      if (typeof scan !== 'string') valid.push({ name, gen, scan })
      else unreadable.push({ name, gen, ...(await headerCheck(io, path.join(dir, name))), problem: scan })
    }
  }
  await Promise.all(Array.from({ length: SCAN_CONCURRENCY }, worker))
  valid.sort((a, b) => cmp(a.scan.header.baseSeq, b.scan.header.baseSeq))
  const highest = [...valid, ...unreadable].reduce((m, f) => max(m, f.gen), 0n)
  const spareAt = unreadable.findIndex((f) => f.gen === highest && f.blankHeader)
  const spare = spareAt < 0 ? undefined : unreadable.splice(spareAt, 1)[0]
  return { valid, unreadable, spare }
}

async function headerCheck(io: SlotFs, file: string): Promise<{ fileBytes: number; blankHeader: boolean }> {
  const f = await io.open(file, 'r')
  try {
    const fileBytes = await f.size()
    const head = Buffer.alloc(SEGMENT_HEADER_BYTES)
    const n = await readFully(f, head, 0, head.length, 0)
    return { fileBytes, blankHeader: isBlankHeader(head.subarray(0, n)) }
  } finally {
    await f.close()
  }
}

function toSegment(f: Readable): Segment {
  // Damage, a torn tail or a previous use may have left bytes anywhere after the frames.
  const seg = newSegment(f.gen, f.scan.header.baseSeq, f.scan.fileBytes, f.scan.fileBytes)
  seg.count = seg.writtenCount = f.scan.count
  seg.end = seg.writtenEnd = f.scan.end
  seg.checkpoints = f.scan.checkpoints
  return seg
}

/** Checks that `b` starts where `a` ends; explains a gap as damage or refuses it as a missing segment. */
function checkJoin(
  dir: string,
  a: Readable,
  segA: Segment,
  b: Readable,
  segB: Segment,
  unreadable: Unreadable[],
  ackedFsn: bigint,
  report: (r: DataLossRange) => void,
): void {
  const expected = segA.baseSeq + BigInt(segA.count)
  if (segB.baseSeq < expected) {
    throw new SlotCorruptError(
      dir,
      `${b.name} starts at FSN ${segB.baseSeq} but ${a.name} already holds FSNs up to ${expected - 1n}`,
    )
  }
  if (segB.baseSeq === expected || segB.baseSeq - 1n <= ackedFsn) return
  const between = unreadable.find((f) => f.gen > a.gen && f.gen < b.gen)
  if (a.scan.tornBytes > 0 || between) {
    report({
      fromFsn: expected,
      toFsn: segB.baseSeq - 1n,
      exact: true,
      segment: between?.name ?? a.name,
      reason: between ? 'unreadable segment header' : 'damaged frame',
    })
    return
  }
  throw new SegmentGapError(dir, max(expected, ackedFsn + 1n), segB.baseSeq - 1n, a.name, b.name)
}

/** The watermark if present, readable and not above the ceiling; otherwise warns and returns undefined. */
async function readValidWatermark(
  io: SlotFs,
  dir: string,
  ceiling: bigint,
  haveSegments: boolean,
  logger: SlotLogger,
): Promise<bigint | undefined> {
  const read = await readWatermark(io, dir)
  if (read === undefined) return undefined
  if ('corrupt' in read) {
    logger.warn(
      `.ack-watermark in ${dir} is corrupt (${read.corrupt}); ignoring it. Replay re-sends frames from the ` +
        'lowest segment, which duplicates rows unless the destination deduplicates',
    )
    return undefined
  }
  if (haveSegments && read.fsn > ceiling) {
    logger.warn(
      `.ack-watermark in ${dir} (${read.fsn}) exceeds publishedFsn ${ceiling}; ignoring it. Replay re-sends ` +
        'frames from the lowest segment, which duplicates rows unless the destination deduplicates',
    )
    return undefined
  }
  return read.fsn
}

/** Most frames `bytes` could hold (each frame takes at least its header). */
function maxFrames(bytes: number): bigint {
  return BigInt(Math.max(0, Math.floor(bytes / FRAME_HEADER_BYTES)))
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b
}

function cmp(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0
}
