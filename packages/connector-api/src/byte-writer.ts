/**
 * A growing byte buffer that converters copy ranges of their input into. `TextWriter` writes
 * JavaScript values; a CSV field that goes to the output unchanged is copied here as the bytes it
 * already is, without becoming a string first.
 */

const encoder = new TextEncoder()

/** Ranges shorter than this are copied in a loop: below it, `set` on a fresh subarray costs more. */
const SHORT_COPY = 32

export class ByteWriter {
  private bytes: Uint8Array
  private length = 0

  constructor(capacity: number) {
    this.bytes = new Uint8Array(Math.max(capacity, 64))
  }

  /** A copy of the bytes written, sized to fit. */
  copy(): Uint8Array {
    return this.bytes.slice(0, this.length)
  }

  /** One byte. */
  byte(code: number): void {
    this.reserve(1)
    this.bytes[this.length++] = code
  }

  /** `from[start..end)` as it is. */
  range(from: Uint8Array, start: number, end: number): void {
    const n = end - start
    this.reserve(n)
    const b = this.bytes
    const at = this.length
    if (n < SHORT_COPY) for (let i = 0; i < n; i++) b[at + i] = from[start + i] as number
    else b.set(from.subarray(start, end), at)
    this.length = at + n
  }

  /** All of `bytes`. */
  all(bytes: Uint8Array): void {
    this.range(bytes, 0, bytes.length)
  }

  /** Any text, as `TextEncoder` encodes it (a lone surrogate becomes U+FFFD). */
  utf8(text: string): void {
    // Each UTF-16 unit takes at most 3 UTF-8 bytes.
    this.reserve(3 * text.length)
    this.length += encoder.encodeInto(text, this.bytes.subarray(this.length)).written
  }

  /** Makes room for `n` more bytes. */
  private reserve(n: number): void {
    if (this.length + n <= this.bytes.length) return
    const bigger = new Uint8Array(Math.max(this.bytes.length * 2, this.length + n))
    bigger.set(this.bytes.subarray(0, this.length))
    this.bytes = bigger
  }
}
