/**
 * Copies of the bikehire CSV with some rows spoiled, for the e2e bench's deadletter runs: `count`
 * rows spread evenly from row `first` on (rental_ids `first`, `first + every`, …) have one field
 * changed in place. Invariants: every other byte is the clean file's, each spoiled line keeps its
 * length, and the spoiled rows are exactly those `isSpoiled` names (`spoiledSql` in SQL).
 */
import { open } from 'node:fs/promises'

/** A bikehire CSV line's fields (source-sample's bikehire.ts): where each spoiling writes. */
const START_TIME = 4
const MEMBER_TYPE = 7
const CHUNK_BYTES = 4 * 1024 * 1024
const NEWLINE = 0x0a
const COMMA = 0x2c

/** Which rows a copy spoils: rental_ids `first + k * every` for k < `count`. */
export interface Spoiling {
  readonly first: number
  readonly every: number
  readonly count: number
}

/**
 * Row from which the spoiled rows start: past the 256 KiB (about 3,300 rows) the File source
 * samples for a file's types (source-file's infer.ts), so that a value the source cannot see is
 * wrong (impossibleDay) is not sampled, which would make its column text.
 */
const FIRST_SPOILED = 5000

/** `share` of `rows`, spread evenly from FIRST_SPOILED to the end. */
export function evenSpoiling(rows: number, share: number): Spoiling {
  const count = Math.round(rows * share)
  const every = Math.floor((rows - FIRST_SPOILED) / count)
  if (!(every >= 1))
    throw new Error(`${rows} rows are too few to spoil ${count} of them after row ${FIRST_SPOILED}`)
  return { first: FIRST_SPOILED, every, count }
}

/** rental_id is its row's place in the file from 1 (source-sample's bikehire.ts). */
export function isSpoiled({ first, every, count }: Spoiling, rentalId: number): boolean {
  const step = rentalId - first
  return step >= 0 && step % every === 0 && step / every < count
}

/** `isSpoiled` as an SQL condition on `column`, for PostgreSQL and DuckDB alike. */
export function spoiledSql({ first, every, count }: Spoiling, column: string): string {
  return `(${column} BETWEEN ${first} AND ${first + (count - 1) * every} AND (${column} - ${first}) % ${every} = 0)`
}

/** A change to one line (no newline), in place and of the same length. */
type Spoil = (line: Buffer) => void

/** Bytes that are not UTF-8 in member_type (`member` → `\xFFember`): the File source sets the row aside. */
export const notUtf8: Spoil = (line) => {
  line[fieldStart(line, MEMBER_TYPE)] = 0xff
}

/**
 * A day no month has in start_time (`2024-01-05T…` → `2024-01-45T…`): it still looks like a
 * timestamp to the File source, so it passes on, and a destination's timestamp type cannot hold it.
 */
export const impossibleDay: Spoil = (line) => {
  line[fieldStart(line, START_TIME) + 8] = 0x34 // '4': days 40–49
}

function fieldStart(line: Buffer, field: number): number {
  let at = 0
  for (let f = 0; f < field; f++) at = line.indexOf(COMMA, at) + 1
  return at
}

/** Writes `to`: the CSV `from` (a header line, then bikehire rows) with the rows `spoiling` names spoiled. */
export async function writeSpoiledCopy(
  from: string,
  to: string,
  spoiling: Spoiling,
  spoil: Spoil,
): Promise<void> {
  const input = await open(from)
  const output = await open(to, 'w')
  try {
    let carry = Buffer.alloc(0)
    let header = true
    for (;;) {
      const chunk = Buffer.allocUnsafe(CHUNK_BYTES)
      const { bytesRead } = await input.read(chunk, 0, CHUNK_BYTES, null)
      const bytes = Buffer.concat([carry, chunk.subarray(0, bytesRead)])
      const end = bytesRead === 0 ? bytes.length : bytes.lastIndexOf(NEWLINE) + 1
      for (let start = 0; start < end; ) {
        const newline = bytes.indexOf(NEWLINE, start)
        const stop = newline === -1 || newline >= end ? end : newline
        if (!header && isSpoiled(spoiling, rentalIdOf(bytes, start))) spoil(bytes.subarray(start, stop))
        header = false
        start = stop + 1
      }
      await output.writeFile(bytes.subarray(0, end))
      carry = bytes.subarray(end)
      if (bytesRead === 0) return
    }
  } finally {
    await Promise.all([input.close(), output.close()])
  }
}

/** The digits at `start`, the line's first field. */
function rentalIdOf(bytes: Buffer, start: number): number {
  let id = 0
  for (let i = start; bytes[i]! >= 0x30 && bytes[i]! <= 0x39; i++) id = id * 10 + bytes[i]! - 0x30
  return id
}
