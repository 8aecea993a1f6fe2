/**
 * A part's records as cells, one per schema field: a value's text (a string's value, a number or
 * boolean as written, a json field's JSON text) or null. A record that cannot be read (not UTF-8,
 * not a JSON object, another number of CSV fields) carries the problem instead, so that the sink
 * refuses that row by name. Records are counted as `countRecords` counts them.
 */
import { isUtf8 } from 'node:buffer'
import type { BatchPart, NamespaceSchema } from '@skippr/connector-api'
import { BadRecordError, parseCsv, recordRanges } from '@skippr/connector-api'
import { jsonMembers } from './json-members.js'

export type Part = BatchPart & { readonly schema: NamespaceSchema }
export type Cell = string | null
export type PartRecord = { readonly cells: readonly Cell[] } | { readonly problem: string }

const decoder = new TextDecoder()
const BLANK = /^[ \t\r]*$/

export function readRecords(part: Part): PartRecord[] {
  const read = (text: string) => (part.format === 'csv' ? csvRecord(part, text) : jsonRecord(part, text))
  if (isUtf8(part.body)) {
    const text = decoder.decode(part.body)
    if (part.format === 'jsonl')
      return text
        .split('\n')
        .filter((line) => !BLANK.test(line))
        .map(read)
    return csvRecords(part, text).map((record) => csvCells(part, record))
  }
  // Only a body with bytes that are not UTF-8 is cut into records first, to name the rows holding them.
  return recordRanges(part.body, part.format).map(([start, end]) => {
    const bytes = part.body.subarray(start, end)
    return isUtf8(bytes) ? read(decoder.decode(bytes)) : { problem: 'the record is not UTF-8' }
  })
}

function csvRecords(part: Part, text: string): (string | null)[][] {
  try {
    return parseCsv(text)
  } catch (error) {
    throw new BadRecordError(part.namespace, 'the CSV body is malformed', error)
  }
}

function csvRecord(part: Part, text: string): PartRecord {
  return csvCells(part, csvRecords(part, text)[0] ?? [null])
}

function csvCells(part: Part, record: readonly (string | null)[]): PartRecord {
  const fields = part.schema.fields
  if (record.length !== fields.length)
    return { problem: `the record has ${record.length} fields, the schema ${fields.length}` }
  for (const [i, field] of fields.entries()) {
    const text = record[i]
    if (field.type === 'json' && text != null && !isJson(text))
      return { problem: `column ${JSON.stringify(field.name)}: ${JSON.stringify(text)} is not JSON` }
  }
  return { cells: record }
}

function jsonRecord(part: Part, line: string): PartRecord {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return { problem: 'the line is not JSON' }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { problem: 'the line is not a JSON object' }
  const members = jsonMembers(line)
  return {
    cells: part.schema.fields.map((field) => {
      const text = members.get(field.name)
      if (text === undefined || text === 'null') return null
      if (field.type !== 'json' && text.startsWith('"')) return JSON.parse(text) as string
      return text
    }),
  }
}

export function isJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}
