/**
 * The bikehire dataset (this package's README, "The dataset"): one namespace, `rentals`. Row `i` is a
 * pure function of (seed, i): `drawRental` computes its values, and the encoders write them as
 * CSV or JSON-lines bytes.
 */
import type { NamespaceSchema } from '@skippr/connector-api'
import { AsciiWriter, ascii } from './ascii.js'
import { nextWord, rowWord, seedKey, unit } from './random.js'

export const BIKEHIRE_NAMESPACE = 'rentals'

export const bikehireSchema: NamespaceSchema = {
  namespace: BIKEHIRE_NAMESPACE,
  fields: [
    { name: 'rental_id', type: 'long', nullable: false },
    { name: 'bike_id', type: 'int', nullable: false },
    { name: 'start_station', type: 'int', nullable: false },
    { name: 'end_station', type: 'int', nullable: false },
    { name: 'start_time', type: 'timestamp', nullable: false },
    { name: 'end_time', type: 'timestamp', nullable: false },
    { name: 'duration_s', type: 'int', nullable: false },
    { name: 'member_type', type: 'string', nullable: false },
    { name: 'distance_km', type: 'double', nullable: false },
  ],
  primaryKey: ['rental_id'],
}

/** Row indexes are below 2^32: the hash takes the index as one 32-bit word. */
export const MAX_BIKEHIRE_ROWS = 2 ** 32

export type BikehireFormat = 'csv' | 'jsonl'

/** A rental as values, for tests and tools that want rows rather than bytes. */
export interface Rental {
  rental_id: number
  bike_id: number
  start_station: number
  end_station: number
  start_time: string
  end_time: string
  duration_s: number
  member_type: 'member' | 'casual'
  distance_km: number
}

/** 2024-01-01T00:00:00Z: rentals start from here, one every 40 s on average. */
const FIRST_START = 1_704_067_200
const MEAN_GAP_S = 40
const BIKES = 4000
const STATIONS = 800

/** One row's values, reused from row to row so generation allocates nothing per row. */
class Draw {
  rentalId = 0
  bikeId = 0
  startStation = 0
  endStation = 0
  start = 0
  duration = 0
  member = true
  /** Hundredths of a kilometre, so the text form needs no float formatting. */
  distance = 0
}

function drawRental(key: number, index: number, d: Draw): void {
  const a = rowWord(key, index)
  const b = nextWord(a)
  const c = nextWord(b)
  const e = nextWord(c)
  d.rentalId = index + 1
  d.member = a % 100 < 68
  d.bikeId = 1 + (Math.floor(a / 100) % BIKES)
  d.startStation = 1 + (b % STATIONS)
  // Some rentals are round trips back to the start station.
  d.endStation = Math.floor(b / STATIONS) % 100 < 6 ? d.startStation : 1 + (c % STATIONS)
  d.start = FIRST_START + index * MEAN_GAP_S + (Math.floor(c / STATIONS) % (MEAN_GAP_S * 60))
  // Skewed towards short rides: members commute, casual riders take longer and ride slower.
  const u = unit(e)
  d.duration = d.member ? 180 + Math.floor(u * u * 2700) : 300 + Math.floor(u * u * 6900)
  const kmPerHour = (d.member ? 11 : 7) + (e & 0xff) / 32
  d.distance = Math.round((d.duration * kmPerHour) / 36)
}

const MEMBER = ascii('member')
const CASUAL = ascii('casual')
const COMMA = 44
const NEWLINE = 10
/** An upper bound on one encoded row, so a writer reserves once per row. */
const MAX_ROW_BYTES = 320

function writeCsv(w: AsciiWriter, d: Draw): void {
  w.uint(d.rentalId)
  w.byte(COMMA)
  w.uint(d.bikeId)
  w.byte(COMMA)
  w.uint(d.startStation)
  w.byte(COMMA)
  w.uint(d.endStation)
  w.byte(COMMA)
  w.timestamp(d.start)
  w.byte(COMMA)
  w.timestamp(d.start + d.duration)
  w.byte(COMMA)
  w.uint(d.duration)
  w.byte(COMMA)
  w.text(d.member ? MEMBER : CASUAL)
  w.byte(COMMA)
  w.hundredths(d.distance)
  w.byte(NEWLINE)
}

const K_ID = ascii('{"rental_id":')
const K_BIKE = ascii(',"bike_id":')
const K_START_STATION = ascii(',"start_station":')
const K_END_STATION = ascii(',"end_station":')
const K_START = ascii(',"start_time":"')
const K_END = ascii('","end_time":"')
const K_DURATION = ascii('","duration_s":')
const K_MEMBER = ascii(',"member_type":"')
const K_DISTANCE = ascii('","distance_km":')

function writeJsonl(w: AsciiWriter, d: Draw): void {
  w.text(K_ID)
  w.uint(d.rentalId)
  w.text(K_BIKE)
  w.uint(d.bikeId)
  w.text(K_START_STATION)
  w.uint(d.startStation)
  w.text(K_END_STATION)
  w.uint(d.endStation)
  w.text(K_START)
  w.timestamp(d.start)
  w.text(K_END)
  w.timestamp(d.start + d.duration)
  w.text(K_DURATION)
  w.uint(d.duration)
  w.text(K_MEMBER)
  w.text(d.member ? MEMBER : CASUAL)
  w.text(K_DISTANCE)
  w.hundredths(d.distance)
  w.byte(125) // }
  w.byte(NEWLINE)
}

/** The header row of the CSV file form (a source chunk's CSV has no header). */
export const BIKEHIRE_CSV_HEADER = `${bikehireSchema.fields.map((f) => f.name).join(',')}\n`

/**
 * Encodes rows [from, from + count) of the dataset: CSV columns in schema order without a header
 * (connector-api's `csv` format), or JSON lines. Reuse one encoder per stream: it writes every
 * block into the same buffer.
 */
export class BikehireEncoder {
  private readonly key: number
  private readonly format: BikehireFormat
  private readonly draw = new Draw()
  private readonly writer = new AsciiWriter(64 * 1024)

  constructor(seed: number, format: BikehireFormat) {
    this.key = seedKey(seed)
    this.format = format
  }

  /** The bytes are valid until the next call: `slice()` them to keep them. */
  encode(from: number, count: number): Uint8Array {
    const w = this.writer
    // Two loops rather than a function-valued field: each call site stays monomorphic and inlined.
    const d = this.draw
    if (this.format === 'csv') {
      for (let i = from; i < from + count; i++) {
        w.reserve(MAX_ROW_BYTES)
        drawRental(this.key, i, d)
        writeCsv(w, d)
      }
    } else {
      for (let i = from; i < from + count; i++) {
        w.reserve(MAX_ROW_BYTES)
        drawRental(this.key, i, d)
        writeJsonl(w, d)
      }
    }
    return w.take()
  }
}

/** The rows `BikehireEncoder.encode` writes, as values. */
export function bikehireRows(seed: number, from: number, count: number): Rental[] {
  const key = seedKey(seed)
  const d = new Draw()
  const rows: Rental[] = []
  for (let i = from; i < from + count; i++) {
    drawRental(key, i, d)
    rows.push({
      rental_id: d.rentalId,
      bike_id: d.bikeId,
      start_station: d.startStation,
      end_station: d.endStation,
      start_time: isoSeconds(d.start),
      end_time: isoSeconds(d.start + d.duration),
      duration_s: d.duration,
      member_type: d.member ? 'member' : 'casual',
      distance_km: d.distance / 100,
    })
  }
  return rows
}

/** The reference form of a timestamp, independent of the fast writer it checks. */
function isoSeconds(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString().replace('.000Z', 'Z')
}
