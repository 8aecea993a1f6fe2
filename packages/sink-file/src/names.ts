/**
 * A file is written under a hidden temporary name in its final directory,
 * `.<name>.<pid>.<8 hex>.tmp`, and linked to its name once whole. Keys never start with a dot
 * (`safeName` and partition values encode a leading one), so a listing tells the two apart by name
 * alone, and `open` can tell which key a crashed writer's leftover was meant to become, and
 * whether that writer still lives.
 */
import { randomBytes } from 'node:crypto'

const TEMPORARY = /^\.(.+)\.(\d+)\.[0-9a-f]{8}\.tmp$/

/** A fresh temporary name for the file `name`, owned by this process and unique to this attempt. */
export function temporaryName(name: string): string {
  return `.${name}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
}

/** The name a temporary file was to be linked to and the PID of its writer; undefined for any other name. */
export function temporaryOf(fileName: string): { readonly name: string; readonly pid: number } | undefined {
  const match = TEMPORARY.exec(fileName)
  return match ? { name: match[1] as string, pid: Number(match[2]) } : undefined
}
