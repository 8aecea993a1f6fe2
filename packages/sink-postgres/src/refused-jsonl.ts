/**
 * Finding the refused records of a JSON-lines part. The INSERT … SELECT json_populate_record that
 * loads them (load.ts) fails without saying which line, so here each record is staged with its
 * index (`recordRanges`: blank lines are not records) in a temp table, and the INSERT is tried on
 * ranges of the staged rows under savepoints, halving a range that fails, until each refused
 * record fails alone; the rest stay inserted, in order. The data crosses the wire once, to stage
 * it. A record the staging COPY itself refuses (bytes that are not UTF-8) is found as in
 * copy-refusals.ts.
 *
 * The conversion error does not name the column either. For a refused record whose error has no
 * column, one more query checks that the line is a JSON object (else it is refused as not JSON, the
 * server's `::json` error as its reason) and the object's keys are then halved the same way, each
 * try converting only some keys, until one key fails alone: its column is named with its error.
 */
import { recordRanges } from '@skippr/connector-api'
import pg from 'pg'
import { type CopyRecords, copyRefusing, type RecordRefusal } from './copy-refusals.js'
import { qualifiedName } from './ddl.js'
import { sqlStateOf } from './errors.js'
import { insertJsonLines, JSONL_DIALECT, type Part } from './load.js'
import { tryStatement } from './savepoint.js'

/** Exists only inside the search's transaction, which is always rolled back. */
const STAGED = '_skippr_jsonl_rows'

/** The dialect's quote and delimiter bytes (JSONL_DIALECT). */
const QUOTE = 0x01
const DELIMITER = 0x02
const LF = 0x0a

/** A refused record, with the column its error is about when the server's error did not say. */
export interface JsonlRefusal extends RecordRefusal {
  readonly column?: string
}

/** Inserts the records of `part` the table takes; returns the others in order. */
export async function insertRefusingJsonl(
  client: pg.ClientBase,
  schema: string,
  part: Part,
): Promise<JsonlRefusal[]> {
  await client.query(`CREATE TEMP TABLE IF NOT EXISTS ${STAGED} (n integer PRIMARY KEY, line text)`)
  await client.query(`TRUNCATE ${STAGED}`)
  const lines = stagedLines(part.body)
  const unstaged = await copyRefusing(
    client,
    `COPY ${STAGED} (n, line) FROM STDIN WITH (${JSONL_DIALECT})`,
    STAGED,
    lines,
  )
  const notStaged = new Set(unstaged.map((r) => r.record))
  const staged = Array.from({ length: lines.count }, (_, n) => n).filter((n) => !notStaged.has(n))
  const insert = insertJsonLines(schema, part, STAGED)
  const refused: JsonlRefusal[] = []
  await insertHalving(client, insert, staged, refused)
  const table = qualifiedName(schema, part.namespace)
  const named: JsonlRefusal[] = []
  for (const refusal of refused) named.push(await withColumn(client, table, refusal))
  return [...unstaged, ...named].sort((a, b) => a.record - b.record)
}

/**
 * Each non-blank line as a staged row `n, line` in the COPY dialect: the line quoted (its quote
 * bytes doubled), so every byte of it arrives as it is, and no line of the data is `\.`.
 */
function stagedLines(body: Uint8Array): CopyRecords {
  const pieces: Uint8Array[] = []
  const starts = [0]
  let length = 0
  recordRanges(body, 'jsonl').forEach(([start, end], n) => {
    const line = quoteBytes(body.subarray(start, end))
    const head = Buffer.concat([Buffer.from(String(n)), Buffer.from([DELIMITER, QUOTE])])
    pieces.push(head, line, Buffer.from([QUOTE, LF]))
    length += head.length + line.length + 2
    starts.push(length)
  })
  const data = Buffer.concat(pieces)
  return {
    count: starts.length - 1,
    data: (from, to) => data.subarray(starts[from], starts[to]),
    embeddedNewlines: () => 0,
  }
}

function quoteBytes(line: Uint8Array): Uint8Array {
  if (!line.includes(QUOTE)) return line
  const out: number[] = []
  for (const byte of line) {
    out.push(byte)
    if (byte === QUOTE) out.push(QUOTE)
  }
  return Uint8Array.from(out)
}

/** Inserts the staged rows `staged` (their `n`, ascending), halving each range the table refuses. */
async function insertHalving(
  client: pg.ClientBase,
  insert: string,
  staged: readonly number[],
  refused: JsonlRefusal[],
): Promise<void> {
  if (staged.length === 0) return
  const first = staged[0] as number
  const last = staged[staged.length - 1] as number
  const tried = await tryStatement(client, `${insert} WHERE j.n BETWEEN ${first} AND ${last} ORDER BY j.n`)
  if (!('refusal' in tried)) return
  if (staged.length === 1) {
    refused.push({ record: first, error: tried.refusal })
    return
  }
  const half = Math.ceil(staged.length / 2)
  await insertHalving(client, insert, staged.slice(0, half), refused)
  await insertHalving(client, insert, staged.slice(half), refused)
}

/** `refusal` with the column its error is about, or as not JSON, when its error names no column. */
async function withColumn(
  client: pg.ClientBase,
  table: string,
  refusal: JsonlRefusal,
): Promise<JsonlRefusal> {
  // A constraint (class 23) is about the row, or names its column already.
  const { column } = refusal.error as { column?: unknown }
  if (typeof column === 'string' || !sqlStateOf(refusal.error)?.startsWith('22')) return refusal
  const n = refusal.record
  const shape = await tryStatement<{ keys: string[] | null }>(
    client,
    `SELECT CASE WHEN json_typeof(l) = 'object' THEN ARRAY(SELECT json_object_keys(l)) END AS keys
       FROM (SELECT j.line::json AS l FROM ${STAGED} j WHERE j.n = ${n}) s`,
  )
  if ('refusal' in shape) return { record: n, error: shape.refusal }
  const keys = shape.rows[0]?.keys
  if (!keys || keys.length === 0) return refusal
  const failing = await firstFailingKey(client, table, n, keys)
  return failing ? { record: n, error: failing.error, column: failing.key } : refusal
}

/** The key of record `n` that fails to convert alone, halving `keys`; undefined when none does. */
async function firstFailingKey(
  client: pg.ClientBase,
  table: string,
  n: number,
  keys: readonly string[],
): Promise<{ key: string; error: unknown } | undefined> {
  const convert = (some: readonly string[]) =>
    tryStatement(
      client,
      `SELECT 1 FROM ${STAGED} j, json_populate_record(NULL::${table},
         (SELECT json_object_agg(e.key, e.value) FROM json_each(j.line::json) e
           WHERE e.key = ANY(ARRAY[${some.map((k) => pg.escapeLiteral(k)).join(', ')}]::text[]))) r
        WHERE j.n = ${n}`,
    )
  const all = await convert(keys)
  if (!('refusal' in all)) return undefined
  let error = all.refusal
  let [lo, hi] = [0, keys.length]
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1
    const left = await convert(keys.slice(lo, mid))
    if ('refusal' in left) {
      error = left.refusal
      hi = mid
    } else lo = mid
  }
  return { key: keys[lo] as string, error }
}
