import { createHash } from 'node:crypto'
import type { FileHandle } from 'node:fs/promises'

/** Bytes at the start of a file, and bytes just before the read position, that a fingerprint covers. */
const WINDOW = 1024

/**
 * What a file held before the read position, in brief: a hash of its first kilobyte and of the
 * kilobyte before the position. An append changes neither; truncation, rewriting or replacing
 * the file almost always changes one, which is how a resumed read knows whether the bytes it
 * already passed on are still the file's beginning.
 */
export class Fingerprint {
  private constructor(
    private head: Uint8Array,
    private tail: Uint8Array,
  ) {}

  static empty(): Fingerprint {
    return new Fingerprint(new Uint8Array(0), new Uint8Array(0))
  }

  /** The fingerprint of `file` read up to `pos`. */
  static async of(file: FileHandle, pos: number): Promise<Fingerprint> {
    const head = await readAt(file, 0, Math.min(WINDOW, pos))
    const tail = await readAt(file, Math.max(0, pos - WINDOW), Math.min(WINDOW, pos))
    return new Fingerprint(head, tail)
  }

  /** Takes in the bytes that follow the current position. */
  advance(bytes: Uint8Array): void {
    if (this.head.length < WINDOW) this.head = concat(this.head, bytes.subarray(0, WINDOW - this.head.length))
    this.tail =
      bytes.length >= WINDOW ? bytes.slice(bytes.length - WINDOW) : concat(this.tail, bytes).slice(-WINDOW)
  }

  digest(): string {
    return createHash('sha256').update(this.head).update(this.tail).digest('base64url').slice(0, 22)
  }
}

async function readAt(file: FileHandle, position: number, length: number): Promise<Uint8Array> {
  const buffer = Buffer.alloc(length)
  const { bytesRead } = await file.read(buffer, 0, length, position)
  return buffer.subarray(0, bytesRead)
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  return Buffer.concat([a, b])
}
