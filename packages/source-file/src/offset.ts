import type { SourceOffset } from '@skippr/connector-api'
import { FileOffsetError } from './errors.js'

/** How far one file has been read (a type, not an interface, so that it is a JsonValue). */
export type FilePosition = {
  /** Byte offset after the last record passed on (and after the header row). */
  readonly pos: number
  /** The file's inode when it was read: follows a file renamed by log rotation. */
  readonly ino: string
  /** `Fingerprint` of the bytes before `pos`: tells an append from a replaced file. */
  readonly fp: string
}

/** The File source's offset: `{ files: { "<path relative to skippr.yml>": FilePosition } }`. */
export type FilePositions = Map<string, FilePosition>

export function parseOffset(from: SourceOffset | undefined): FilePositions {
  const positions: FilePositions = new Map()
  if (from === undefined || from === null) return positions
  const files = isRecord(from) ? from.files : undefined
  if (!isRecord(files)) throw new FileOffsetError(from)
  for (const [key, value] of Object.entries(files)) {
    if (!isPosition(value)) throw new FileOffsetError(from)
    positions.set(key, { pos: value.pos, ino: value.ino, fp: value.fp })
  }
  return positions
}

export function toOffset(positions: FilePositions): SourceOffset {
  return { files: Object.fromEntries(positions) }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isPosition(value: unknown): value is FilePosition {
  return (
    isRecord(value) &&
    Number.isSafeInteger(value.pos) &&
    (value.pos as number) >= 0 &&
    typeof value.ino === 'string' &&
    typeof value.fp === 'string'
  )
}
