import { describe, expect, it } from 'vitest'
import { AsciiWriter } from '../src/ascii.js'

const text = (w: AsciiWriter) => new TextDecoder().decode(w.take())

describe('AsciiWriter', () => {
  it('writes integers at every digit-count boundary', () => {
    const numbers = [0, 7, 9, 10, 99, 100, 999, 1000, 9999, 10_000, 99_999, 123_456, 4_294_967_296]
    for (let p = 1; p < 16; p++) numbers.push(10 ** p - 1, 10 ** p)
    const w = new AsciiWriter(8)
    for (const n of numbers) {
      w.reserve(20)
      w.uint(n)
      w.byte(32)
    }
    expect(text(w)).toBe(`${numbers.join(' ')} `)
  })

  it('writes hundredths with two decimals', () => {
    const w = new AsciiWriter(64)
    for (const n of [0, 5, 10, 99, 100, 1234, 100_001]) {
      w.hundredths(n)
      w.byte(32)
    }
    expect(text(w)).toBe('0.00 0.05 0.10 0.99 1.00 12.34 1000.01 ')
  })

  it('writes the same timestamps as Date, across days, leap days and years', () => {
    const seconds = [0, 59, 86_399, 86_400, 951_782_400, 1_709_164_799, 1_709_164_800, 1_735_689_599]
    for (let s = 1_704_067_200; s < 1_704_067_200 + 3 * 86_400; s += 4_321) seconds.push(s)
    for (let i = 0; i < 500; i++) seconds.push(Math.floor(Math.random() * 253_402_300_799))
    const w = new AsciiWriter(16)
    const expected: string[] = []
    for (const s of seconds) {
      w.reserve(21)
      w.timestamp(s)
      w.byte(32)
      expected.push(new Date(s * 1000).toISOString().replace('.000Z', 'Z'))
    }
    expect(text(w)).toBe(`${expected.join(' ')} `)
  })

  it('grows and starts over after take', () => {
    const w = new AsciiWriter(1)
    w.reserve(5)
    w.uint(12345)
    expect(text(w)).toBe('12345')
    expect(w.size).toBe(0)
    w.reserve(1)
    w.byte(65)
    expect(text(w)).toBe('A')
  })
})
