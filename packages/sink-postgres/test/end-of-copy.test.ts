import { describe, expect, it } from 'vitest'
import { quoteEndOfCopyLines } from '../src/end-of-copy.js'

const QUOTE = 0x22
const bytes = (text: string) => new TextEncoder().encode(text)
const text = (body: Uint8Array) => new TextDecoder().decode(body)

describe('quoteEndOfCopyLines', () => {
  it('passes a body without a \\. line through as the same bytes, not a copy', () => {
    for (const body of [bytes('a\nb\n'), bytes('\\.x\n \\.\na\\.\n'), bytes('')])
      expect(quoteEndOfCopyLines(body, QUOTE)).toBe(body)
  })

  it('quotes every \\. line: first, last, before LF, CR or CRLF, and without a newline at the end', () => {
    const body = bytes('\\.\na\n\\.\r\n\\.\rb\n\\.')
    expect(text(quoteEndOfCopyLines(body, QUOTE))).toBe('"\\."\na\n"\\."\r\n"\\."\rb\n"\\."')
    expect(text(quoteEndOfCopyLines(bytes('{}\n\\.\n'), 0x01))).toBe('{}\n\u0001\\.\u0001\n')
  })

  it('reads the body where it lies in a larger buffer', () => {
    const whole = bytes('xx\n\\.\nyy')
    expect(text(quoteEndOfCopyLines(whole.subarray(3, 6), QUOTE))).toBe('"\\."\n')
  })
})
