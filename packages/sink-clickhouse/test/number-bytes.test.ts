import { expect, it } from 'vitest'
import { shortDecimal, shortInteger } from '../src/number-bytes.js'

const bytesOf = (text: string) => Buffer.from(text, 'latin1')
const decimal = (text: string) => shortDecimal(bytesOf(text), 0, text.length)
const integer = (text: string) => shortInteger(bytesOf(text), 0, text.length)

/** Short decimals as sources write them: up to 15 digits, up to 22 after the point, signs and zeros. */
function randomDecimals(count: number): string[] {
  const texts: string[] = []
  for (let n = 0; n < count; n++) {
    const digits = 1 + Math.floor(Math.random() * 15)
    const decimals = Math.floor(Math.random() * Math.min(digits, 23))
    let text = String(Math.floor(Math.random() * 10 ** digits)).padStart(decimals + 1, '0')
    if (decimals > 0) text = `${text.slice(0, -decimals)}.${text.slice(-decimals)}`
    texts.push(Math.random() < 0.5 ? `-${text}` : text)
  }
  return texts
}

it('reads a short decimal from its bytes as exactly the double Number() reads from its text', () => {
  const texts = ['0', '-0', '0.0', '-0.0', '3.47', '0.1', '0.30000000000000004', '9007199254740992']
  texts.push('900719925474099.1', '0.0000000000000000000001', '123456789012345', '1.7976931348623157')
  texts.push(...randomDecimals(20_000))
  const wrong = texts.filter((text) => {
    const value = decimal(text)
    return value !== undefined && !Object.is(value, Number(text))
  })
  expect(wrong).toEqual([])
  // The fast path must take most of them, or it is not one.
  expect(texts.filter((text) => decimal(text) !== undefined).length).toBeGreaterThan(texts.length * 0.9)
})

it('leaves every other text to the text path: exponents, long mantissas, leading zeros, not numbers', () => {
  const others = ['', '-', '.5', '-.5', '1.', '1.2.3', '01', '-01', '00.5', '+1', '1e5', '5e-324', 'NaN']
  others.push(
    'Infinity',
    '9007199254740993',
    '12345678901234567890',
    '0.00000000000000000000001',
    '1,5',
    ' 1',
  )
  expect(others.filter((text) => decimal(text) !== undefined)).toEqual([])
})

it('reads an integer of up to 15 characters as Number() does, and leaves the rest to the text path', () => {
  for (const text of ['0', '-0', '007', '-12', '999999999999999', '-99999999999999', '2147483648'])
    expect(Object.is(integer(text), Number(text)), text).toBe(true)
  const others = ['', '-', '+1', '1.5', '1e3', '9999999999999999', '-999999999999999', ' 1', '1 ']
  expect(others.filter((text) => integer(text) !== undefined)).toEqual([])
})
