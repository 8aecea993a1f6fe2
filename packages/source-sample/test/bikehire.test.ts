import { describe, expect, it } from 'vitest'
import type { Rental } from '../src/bikehire.js'
import { BIKEHIRE_CSV_HEADER, BikehireEncoder, bikehireRows, bikehireSchema } from '../src/bikehire.js'

const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
const lines = (bytes: Uint8Array) => decode(bytes).split('\n').slice(0, -1)

describe('bikehire schema', () => {
  it('is the dataset the README specifies', () => {
    expect(bikehireSchema.namespace).toBe('rentals')
    expect(bikehireSchema.primaryKey).toEqual(['rental_id'])
    expect(bikehireSchema.fields.map((f) => `${f.name}:${f.type}`)).toEqual([
      'rental_id:long',
      'bike_id:int',
      'start_station:int',
      'end_station:int',
      'start_time:timestamp',
      'end_time:timestamp',
      'duration_s:int',
      'member_type:string',
      'distance_km:double',
    ])
    expect(BIKEHIRE_CSV_HEADER).toBe(`${bikehireSchema.fields.map((f) => f.name).join(',')}\n`)
  })
})

describe('BikehireEncoder', () => {
  it('writes CSV rows whose values are the rows bikehireRows gives', () => {
    const from = 4_000_000
    const rows = bikehireRows(9, from, 3000)
    const expected = rows.map((r) =>
      [
        r.rental_id,
        r.bike_id,
        r.start_station,
        r.end_station,
        r.start_time,
        r.end_time,
        r.duration_s,
        r.member_type,
        r.distance_km.toFixed(2),
      ].join(','),
    )
    expect(lines(new BikehireEncoder(9, 'csv').encode(from, 3000))).toEqual(expected)
  })

  it('writes JSON lines that parse to the rows bikehireRows gives', () => {
    const jsonl = lines(new BikehireEncoder(3, 'jsonl').encode(100, 2000))
    expect(jsonl.map((line) => JSON.parse(line))).toEqual(bikehireRows(3, 100, 2000))
  })

  it('is deterministic for a seed, and the seed matters', () => {
    const a = decode(new BikehireEncoder(42, 'csv').encode(0, 5000))
    expect(decode(new BikehireEncoder(42, 'csv').encode(0, 5000))).toBe(a)
    expect(decode(new BikehireEncoder(43, 'csv').encode(0, 5000))).not.toBe(a)
  })

  it('makes row i depend on nothing but the seed and i', () => {
    const encoder = new BikehireEncoder(5, 'csv')
    const whole = lines(encoder.encode(0, 4000))
    expect(lines(encoder.encode(1234, 2766))).toEqual(whole.slice(1234))
    expect(lines(new BikehireEncoder(5, 'csv').encode(3999, 1))).toEqual(whole.slice(3999))
  })

  it('writes ids and times correctly far into the id range', () => {
    const from = 2 ** 32 - 10
    const rows = bikehireRows(1, from, 10)
    expect(rows.at(-1)!.rental_id).toBe(2 ** 32)
    expect(lines(new BikehireEncoder(1, 'jsonl').encode(from, 10)).map((l) => JSON.parse(l))).toEqual(rows)
  })
})

describe('bikehire rows', () => {
  const rows = bikehireRows(1, 0, 20_000)

  it('have unique sequential ids', () => {
    expect(rows.map((r) => r.rental_id)).toEqual(rows.map((_, i) => i + 1))
  })

  it('are plausible rentals', () => {
    // One assertion over all rows: a problem names the row and what is wrong with it.
    const problems: string[] = []
    const check = (ok: boolean, i: number, what: string) => ok || problems.push(`row ${i}: ${what}`)
    for (const [i, r] of rows.entries()) {
      const start = Date.parse(r.start_time) / 1000
      const lateBy = start - (1_704_067_200 + i * 40)
      const kmPerHour = r.distance_km / (r.duration_s / 3600)
      check(
        Date.parse(r.end_time) / 1000 - start === r.duration_s,
        i,
        'end_time is not start_time + duration_s',
      )
      check(lateBy >= 0 && lateBy < 2400, i, `start_time ${r.start_time} is out of sequence`)
      check(r.duration_s >= 180 && r.duration_s <= 7200, i, `duration_s ${r.duration_s}`)
      check(r.bike_id >= 1 && r.bike_id <= 4000, i, `bike_id ${r.bike_id}`)
      check(r.start_station >= 1 && r.start_station <= 800, i, `start_station ${r.start_station}`)
      check(r.end_station >= 1 && r.end_station <= 800, i, `end_station ${r.end_station}`)
      check(kmPerHour > 6.9 && kmPerHour < 19.1, i, `speed ${kmPerHour} km/h`)
      check(r.member_type === 'member' || r.member_type === 'casual', i, `member_type ${r.member_type}`)
    }
    expect(problems).toEqual([])
    const share = (test: (r: Rental) => boolean) => rows.filter(test).length / rows.length
    expect(share((r) => r.member_type === 'member')).toBeGreaterThan(0.64)
    expect(share((r) => r.member_type === 'member')).toBeLessThan(0.72)
    expect(share((r) => r.start_station === r.end_station)).toBeGreaterThan(0.04)
    expect(share((r) => r.start_station === r.end_station)).toBeLessThan(0.08)
  })
})
