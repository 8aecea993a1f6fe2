import { describe, expect, it } from 'vitest'
import { numberFits } from '../src/csv-values.js'

describe('numberFits', () => {
  it('takes integers within the type, leading zeros and spaces around them as both sinks read them', () => {
    const fit = ['1', '-7', '007', ' 12 ', '+3', '2147483647', '-2147483648']
    expect(fit.map((v) => numberFits(v, 'int'))).toEqual(fit.map(() => true))
    const unfit = ['x', '', '1.0', '1e3', '2147483648', '-', '1 2']
    expect(unfit.map((v) => numberFits(v, 'int'))).toEqual(unfit.map(() => false))
    expect([numberFits('9223372036854775807', 'long'), numberFits('9223372036854775808', 'long')]).toEqual([
      true,
      false,
    ])
    expect(numberFits(null, 'int')).toBe(true)
  })

  it('takes any decimal a double holds, and the infinities and NaN as both sinks spell them', () => {
    const fit = ['1.5', '-.5', '1e308', 'NaN', '-Infinity', 'inf', '00.5', '7']
    expect(fit.map((v) => numberFits(v, 'double'))).toEqual(fit.map(() => true))
    const unfit = ['abc', '1e400', '1,5', '', '0x10']
    expect(unfit.map((v) => numberFits(v, 'double'))).toEqual(unfit.map(() => false))
  })
})
