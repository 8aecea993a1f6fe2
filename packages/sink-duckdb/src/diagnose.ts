/**
 * The first pass of the search for refused rows (refusals.ts): one statement over a part's records
 * read as the load reads them, each carrying its index (indexed.ts), that names the records the load
 * stops at and why (diagnose-csv.ts, diagnose-jsonl.ts, checks.ts).
 *
 * It may miss a record (a key given twice, which read_json accepts under `ignore_errors`) but names
 * no record the load accepts: refusals.ts loads the rest to check, and bisects what is left.
 */
import type { Diagnosis, Refusal } from './checks.js'
import { csvRefusals } from './diagnose-csv.js'
import { jsonlRefusals } from './diagnose-jsonl.js'
import type { RecordRange } from './indexed.js'
import type { Part } from './load.js'

/** The records of `part` (`ranges`: its records' byte ranges) that the load refuses, by index. */
export async function refusalsInPart(
  diagnosis: Diagnosis,
  part: Part,
  ranges: readonly RecordRange[],
): Promise<Refusal[]> {
  const found =
    part.format === 'csv'
      ? await csvRefusals(diagnosis, part, ranges)
      : await jsonlRefusals(diagnosis, part, ranges)
  return found
    .map((refusal) => ({ ...refusal, error: oneLine(`table ${diagnosis.table}: ${refusal.error}`) }))
    .sort((a, b) => a.row - b.row)
}

/** A message on one line: a value's own line breaks written as `\n` and `\r`. */
function oneLine(text: string): string {
  return text.replaceAll('\r', '\\r').replaceAll('\n', '\\n')
}
