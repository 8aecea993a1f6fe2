/**
 * Writes values as UTF-8 text straight into a growing byte buffer. Building rows as strings and
 * encoding them afterwards spends most of its time making and collecting intermediate strings
 * (a profile of `encodeCsv` on bikehire rows: a quarter in the garbage collector, another quarter
 * flattening and encoding the joined text); integers and `Date`s are written digit by digit here,
 * and strings are copied a character at a time while they are ASCII.
 */
import { civilFromDays } from './calendar.js'

const encoder = new TextEncoder()

/** "00".."99" as byte pairs. */
const DIGIT_PAIRS = new Uint8Array(200)
for (let i = 0; i < 100; i++) {
  DIGIT_PAIRS[2 * i] = 48 + Math.floor(i / 10)
  DIGIT_PAIRS[2 * i + 1] = 48 + (i % 10)
}

const QUOTE = 34
const MS_PER_DAY = 86_400_000
/** 0000-01-01T00:00:00.000Z and 10000-01-01T00:00:00.000Z: `toISOString` writes 4-digit years between. */
const FIRST_4_DIGIT_YEAR_MS = -62_167_219_200_000
const FIRST_6_DIGIT_YEAR_MS = 253_402_300_800_000
/**
 * Integers below this (15 digits) are written digit by digit: `Math.floor(n / 100)` is exact for
 * them (the quotient's spacing stays well under 0.01), which it is not for all safe integers.
 */
const MAX_EXACT_DIGITS = 1e15
const INT32_MAX = 2 ** 31 - 1
/**
 * Decimal places `number` tries before handing a fraction to `String`. No more than 6, so every
 * value it writes is at least 1e-6, which `String` writes in fixed notation (1e-7 it does not).
 */
const MAX_PLACES = 6
const POWERS_OF_TEN = Array.from({ length: MAX_PLACES + 1 }, (_, i) => 10 ** i)
/** Room for any number's text: `String(-1.7976931348623157e308)` is 24 characters. */
const MAX_NUMBER_CHARS = 24
/** `YYYY-MM-DDTHH:MM:SS.mmmZ` */
const ISO_CHARS = 24

export class TextWriter {
  private bytes: Uint8Array
  private length = 0

  constructor(bytes: Uint8Array) {
    this.bytes = bytes
  }

  /** The buffer written into, for reuse by the next writer once this one's text is copied out. */
  get buffer(): Uint8Array {
    return this.bytes
  }

  /** A copy of the bytes written, sized to fit. */
  copy(): Uint8Array {
    return this.bytes.slice(0, this.length)
  }

  /** One ASCII character. */
  byte(code: number): void {
    this.reserve(1)
    this.bytes[this.length++] = code
  }

  /** A number as `String(n)` writes it. */
  number(n: number): void {
    this.reserve(MAX_NUMBER_CHARS)
    if (Number.isInteger(n)) {
      if (Math.abs(n) < MAX_EXACT_DIGITS) this.decimal(n, 0)
      else this.ascii(String(n))
      return
    }
    // A value with few decimals (a price, a distance) is an integer over 10^places. At the fewest
    // places that give it back exactly, those are the digits of `String`'s shortest round-trip
    // form: two decimals of at most 15 significant digits never round to the same double.
    for (let places = 1; places <= MAX_PLACES; places++) {
      const scale = POWERS_OF_TEN[places] as number
      const scaled = Math.round(n * scale)
      if (scaled / scale === n && Math.abs(scaled) < MAX_EXACT_DIGITS) {
        this.decimal(scaled, places)
        return
      }
    }
    this.ascii(String(n))
  }

  /**
   * A time value as `Date#toISOString` writes it. Years 0–9999 are computed here (the date from the
   * day number, the time of day by division); other years and invalid dates go to `toISOString`,
   * which writes `±YYYYYY` or throws the same RangeError it always does.
   */
  isoTimestamp(date: Date): void {
    const ms = date.getTime()
    if (!(ms >= FIRST_4_DIGIT_YEAR_MS && ms < FIRST_6_DIGIT_YEAR_MS)) {
      this.ascii(date.toISOString())
      return
    }
    this.reserve(ISO_CHARS)
    const day = Math.floor(ms / MS_PER_DAY)
    let rest = ms - day * MS_PER_DAY
    const { year, month, day: dayOfMonth } = civilFromDays(day)
    const hour = Math.floor(rest / 3_600_000)
    rest -= hour * 3_600_000
    const minute = Math.floor(rest / 60_000)
    rest -= minute * 60_000
    const second = Math.floor(rest / 1000)
    const milli = rest - second * 1000
    const b = this.bytes
    const at = this.length
    const century = Math.floor(year / 100)
    this.pair(at, century)
    this.pair(at + 2, year - century * 100)
    b[at + 4] = 45 // -
    this.pair(at + 5, month)
    b[at + 7] = 45
    this.pair(at + 8, dayOfMonth)
    b[at + 10] = 84 // T
    this.pair(at + 11, hour)
    b[at + 13] = 58 // :
    this.pair(at + 14, minute)
    b[at + 16] = 58
    this.pair(at + 17, second)
    b[at + 19] = 46 // .
    const tenths = Math.floor(milli / 100)
    b[at + 20] = 48 + tenths
    this.pair(at + 21, milli - tenths * 100)
    b[at + 23] = 90 // Z
    this.length += ISO_CHARS
  }

  /** `text` between double quotes, each quote inside doubled (CSV quoting). */
  quoted(text: string): void {
    const n = text.length
    // While the text is ASCII, each character takes one byte, or two for a doubled quote.
    this.reserve(2 * n + 2)
    const b = this.bytes
    let at = this.length
    b[at++] = QUOTE
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i)
      if (c >= 0x80) {
        this.length = at
        this.utf8(text.slice(i).replaceAll('"', '""'))
        this.byte(QUOTE)
        return
      }
      b[at++] = c
      if (c === QUOTE) b[at++] = QUOTE
    }
    b[at++] = QUOTE
    this.length = at
  }

  /** Any text, as `TextEncoder` encodes it. */
  utf8(text: string): void {
    // Each UTF-16 unit takes at most 3 UTF-8 bytes.
    this.reserve(3 * text.length)
    const b = this.bytes
    let at = this.length
    let i = 0
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c >= 0x80) break
      b[at++] = c
    }
    if (i < text.length) at += encoder.encodeInto(text.slice(i), b.subarray(at)).written
    this.length = at
  }

  /** Text known to be ASCII, such as a number's. */
  private ascii(text: string): void {
    this.reserve(text.length)
    const b = this.bytes
    const at = this.length
    for (let i = 0; i < text.length; i++) b[at + i] = text.charCodeAt(i)
    this.length += text.length
  }

  /**
   * `scaled / 10^places` in fixed notation, `scaled` an integer below MAX_EXACT_DIGITS and, with
   * places, not a multiple of 10.
   */
  private decimal(scaled: number, places: number): void {
    // -0 is not below 0, and String(-0) is "0".
    if (scaled < 0) {
      this.bytes[this.length++] = 45 // -
      scaled = -scaled
    }
    if (places === 0) {
      this.digits(scaled, digitCount(scaled))
      return
    }
    const scale = POWERS_OF_TEN[places] as number
    const whole = Math.floor(scaled / scale)
    this.digits(whole, digitCount(whole))
    this.bytes[this.length++] = 46 // .
    const fraction = scaled - whole * scale
    // Leading zeros of the fraction: 0.05 is 5 over 10^2.
    for (let zeros = places - digitCount(fraction); zeros > 0; zeros--) this.bytes[this.length++] = 48
    this.digits(fraction, digitCount(fraction))
  }

  /** A non-negative integer of `count` digits, written from the last pair of digits back. */
  private digits(n: number, count: number): void {
    let at = this.length + count
    this.length = at
    // Float division until the rest fits 32 bits, where `| 0` division compiles to a multiply.
    while (n > INT32_MAX) {
      const high = Math.floor(n / 100)
      at -= 2
      this.pair(at, n - high * 100)
      n = high
    }
    while (n >= 100) {
      const high = (n / 100) | 0
      at -= 2
      this.pair(at, n - high * 100)
      n = high
    }
    if (n >= 10) this.pair(at - 2, n)
    else this.bytes[at - 1] = 48 + n
  }

  /** Two digits of `n` (0–99) at `at`. */
  private pair(at: number, n: number): void {
    this.bytes[at] = DIGIT_PAIRS[n * 2] as number
    this.bytes[at + 1] = DIGIT_PAIRS[n * 2 + 1] as number
  }

  /** Makes room for `n` more bytes. */
  private reserve(n: number): void {
    if (this.length + n <= this.bytes.length) return
    const bigger = new Uint8Array(Math.max(this.bytes.length * 2, this.length + n))
    bigger.set(this.bytes.subarray(0, this.length))
    this.bytes = bigger
  }
}

/** Digits of a non-negative integer below MAX_EXACT_DIGITS. */
function digitCount(n: number): number {
  if (n < 10_000) return n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : 4
  let digits = 5
  for (let limit = 100_000; n >= limit; limit *= 10) digits++
  return digits
}
