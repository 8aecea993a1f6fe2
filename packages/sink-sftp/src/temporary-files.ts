/**
 * A file is written under a temporary name in its final directory, `.<name>.<16 hex>.tmp`, and
 * renamed once whole. Keys never start with a dot (safeName encodes a leading one), so a listing
 * can tell the two apart by name alone, and `open` can tell which key a crashed writer's leftover
 * was meant to become.
 */
import { randomBytes } from 'node:crypto'

const TEMPORARY = /^\.(.+)\.[0-9a-f]{16}\.tmp$/

/** A fresh temporary name for the file `name`, unique to this attempt. */
export function temporaryName(name: string): string {
  return `.${name}.${randomBytes(8).toString('hex')}.tmp`
}

/** The name the temporary file `fileName` was to be renamed to; undefined for any other name. */
export function intendedName(fileName: string): string | undefined {
  return TEMPORARY.exec(fileName)?.[1]
}
