/**
 * Writes ASCII text straight into bytes. Building rows as JavaScript strings and encoding them
 * afterwards measured about half as fast (see README, "Speed"): numbers and timestamps are
 * written digit by digit from small tables instead, timestamps four bytes at a time.
 */
const SECONDS_PER_DAY = 86_400

/** "00".."99" as byte pairs. */
const DIGIT_PAIRS = new Uint8Array(200)
for (let i = 0; i < 100; i++) {
  DIGIT_PAIRS[2 * i] = 48 + Math.floor(i / 10)
  DIGIT_PAIRS[2 * i + 1] = 48 + (i % 10)
}

/** Four ASCII characters of `text` from `at`, as a little-endian 32-bit word. */
function word(text: string, at: number): number {
  return (
    (text.charCodeAt(at) |
      (text.charCodeAt(at + 1) << 8) |
      (text.charCodeAt(at + 2) << 16) |
      (text.charCodeAt(at + 3) << 24)) >>>
    0
  )
}

/**
 * `HH:MM:SSZ` for every second of a day, split to fit the 4-byte words of a 20-byte timestamp
 * `YYYY-MM-DDTHH:MM:SSZ`: the first hour digit completes the word that starts with the day.
 */
const HOUR_DIGIT = new Uint8Array(SECONDS_PER_DAY)
const TIME_WORD_1 = new Uint32Array(SECONDS_PER_DAY)
const TIME_WORD_2 = new Uint32Array(SECONDS_PER_DAY)
for (let s = 0; s < SECONDS_PER_DAY; s++) {
  const hh = String(Math.floor(s / 3600)).padStart(2, '0')
  const mm = String(Math.floor(s / 60) % 60).padStart(2, '0')
  const ss = String(s % 60).padStart(2, '0')
  const time = `${hh}:${mm}:${ss}Z`
  HOUR_DIGIT[s] = time.charCodeAt(0)
  TIME_WORD_1[s] = word(time, 1)
  TIME_WORD_2[s] = word(time, 5)
}

/** A growable byte buffer with the few text forms the sample rows need. */
export class AsciiWriter {
  private bytes: Uint8Array
  private view: DataView
  private length = 0
  /**
   * `YYYY-MM-DDT` as three words, for the last days seen in four slots: a ride that crosses
   * midnight alternates between two days, and `Date` is too slow to call for each.
   */
  private readonly days = new Float64Array(4).fill(Number.NaN)
  private readonly dayWords = new Uint32Array(12)

  constructor(capacity: number) {
    this.bytes = new Uint8Array(capacity)
    this.view = new DataView(this.bytes.buffer)
  }

  get size(): number {
    return this.length
  }

  /** Makes room for `n` more bytes. */
  reserve(n: number): void {
    if (this.length + n <= this.bytes.length) return
    const bigger = new Uint8Array(Math.max(this.bytes.length * 2, this.length + n))
    bigger.set(this.bytes.subarray(0, this.length))
    this.bytes = bigger
    this.view = new DataView(bigger.buffer)
  }

  /**
   * The bytes written so far, and the writer starts over in the same buffer: the view is valid
   * until the next write. Reusing the buffer keeps a long stream from making garbage per block.
   */
  take(): Uint8Array {
    const written = this.bytes.subarray(0, this.length)
    this.length = 0
    return written
  }

  byte(code: number): void {
    this.bytes[this.length++] = code
  }

  /** Copies a short constant (a literal, a JSON key); longer data should not go through here. */
  text(ascii: Uint8Array): void {
    for (let i = 0; i < ascii.length; i++) this.bytes[this.length + i] = ascii[i] as number
    this.length += ascii.length
  }

  /** A non-negative integer below 10^16. */
  uint(n: number): void {
    const digits = digitCount(n)
    let at = this.length + digits
    let rest = n
    while (rest >= 100) {
      const high = Math.floor(rest / 100)
      const pair = (rest - high * 100) * 2
      this.bytes[--at] = DIGIT_PAIRS[pair + 1] as number
      this.bytes[--at] = DIGIT_PAIRS[pair] as number
      rest = high
    }
    if (rest >= 10) {
      this.bytes[--at] = DIGIT_PAIRS[rest * 2 + 1] as number
      this.bytes[--at] = DIGIT_PAIRS[rest * 2] as number
    } else {
      this.bytes[--at] = 48 + rest
    }
    this.length += digits
  }

  /** `hundredths / 100` with exactly two decimals: 1234 → `12.34`. */
  hundredths(n: number): void {
    const cents = n % 100
    this.uint((n - cents) / 100)
    this.bytes[this.length++] = 46
    this.bytes[this.length++] = DIGIT_PAIRS[cents * 2] as number
    this.bytes[this.length++] = DIGIT_PAIRS[cents * 2 + 1] as number
  }

  /** Whole seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (years 1970–9999). */
  timestamp(epochSeconds: number): void {
    const day = Math.floor(epochSeconds / SECONDS_PER_DAY)
    const slot = day & 3
    if (this.days[slot] !== day) this.cacheDay(day, slot)
    const second = epochSeconds - day * SECONDS_PER_DAY
    const words = slot * 3
    const at = this.length
    this.view.setUint32(at, this.dayWords[words] as number, true)
    this.view.setUint32(at + 4, this.dayWords[words + 1] as number, true)
    this.view.setUint32(
      at + 8,
      ((this.dayWords[words + 2] as number) | ((HOUR_DIGIT[second] as number) << 24)) >>> 0,
      true,
    )
    this.view.setUint32(at + 12, TIME_WORD_1[second] as number, true)
    this.view.setUint32(at + 16, TIME_WORD_2[second] as number, true)
    this.length += 20
  }

  private cacheDay(day: number, slot: number): void {
    const prefix = new Date(day * SECONDS_PER_DAY * 1000).toISOString() // YYYY-MM-DDT…
    this.dayWords[slot * 3] = word(prefix, 0)
    this.dayWords[slot * 3 + 1] = word(prefix, 4)
    this.dayWords[slot * 3 + 2] = word(`${prefix.slice(8, 11)} `, 0) & 0xffffff
    this.days[slot] = day
  }
}

function digitCount(n: number): number {
  if (n < 10_000) return n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : 4
  let digits = 5
  for (let limit = 100_000; n >= limit && digits < 16; limit *= 10) digits++
  return digits
}

/** ASCII text as bytes, for constants handed to `AsciiWriter.text`. */
export function ascii(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0))
}
