/** Reading back what CSV sinks wrote, with the contract's parser (an unquoted empty field is NULL). */
import { parseCsv } from '@skippr/connector-api'

/** CSV with a header row, as objects keyed by the header's names. */
export function parseCsvWithHeader(text: string): Record<string, string | null>[] {
  const [header, ...records] = parseCsv(text)
  if (!header) return []
  return records.map((record) => Object.fromEntries(header.map((name, i) => [name ?? '', record[i] ?? null])))
}
