/**
 * What a deadletter run of the e2e bench must leave behind, checked in the destination: the data
 * table holds exactly the good rows (each rental_id of 1…rows once, none that was spoiled) and the
 * deadletter table `_dl_<pipeline>` exactly the spoiled ones (each once, namespace and record
 * naming it). Throws on any difference, so the bench fails rather than time a wrong landing.
 */
import { isSpoiled, type Spoiling, spoiledSql } from './refused-csv.js'

/** Runs a query and gives its rows as objects, whatever the destination's driver. */
export type RowsOf = (sql: string) => Promise<readonly Record<string, unknown>[]>

export interface Expected {
  /** Rows in the file, good and spoiled. */
  readonly rows: number
  readonly spoiling: Spoiling
  readonly namespace: string
  /**
   * Set when the source set the rows aside: its deadletters then name the file line (`line`,
   * the header being line 1); a destination's name the row's place in its batch instead.
   */
  readonly byLine: boolean
}

/** Checks `data` and `deadletters` (table names as the destination's SQL takes them). */
export async function checkLanded(
  rowsOf: RowsOf,
  tables: { readonly data: string; readonly deadletters: string },
  expected: Expected,
): Promise<void> {
  const refused = expected.spoiling.count
  await checkData(rowsOf, tables.data, expected, expected.rows - refused)
  await checkDeadletters(rowsOf, tables.deadletters, expected, refused)
}

async function checkData(rowsOf: RowsOf, table: string, expected: Expected, good: number): Promise<void> {
  const [found] = await rowsOf(
    `SELECT count(*) AS n, count(DISTINCT rental_id) AS ids, min(rental_id) AS low, ` +
      `max(rental_id) AS high, count(*) FILTER (WHERE ${spoiledSql(expected.spoiling, 'rental_id')}) AS spoiled ` +
      `FROM ${table}`,
  )
  const [n, ids, low, high, spoiled] = ['n', 'ids', 'low', 'high', 'spoiled'].map((k) => Number(found?.[k]))
  // Ids within 1…rows, each once, none spoiled, and as many as the good rows: exactly the good rows.
  if (n !== good || ids !== good || low! < 1 || high! > expected.rows || spoiled !== 0)
    throw new Error(
      `${table}: ${n} rows (${ids} rental_ids in ${low}…${high}, ${spoiled} of them spoiled); ` +
        `expected exactly the ${good} good rows`,
    )
}

async function checkDeadletters(
  rowsOf: RowsOf,
  table: string,
  expected: Expected,
  refused: number,
): Promise<void> {
  const letters = await rowsOf(`SELECT namespace, record, offset_key, offset_pos FROM ${table}`)
  const ids = new Set<number>()
  for (const letter of letters) {
    const id = Number(/^\d+/.exec(String(letter.record))?.[0])
    const wrong = whatIsWrong(letter, id, expected)
    if (wrong) throw new Error(`${table}: a deadletter ${wrong}: ${JSON.stringify(letter)}`)
    ids.add(id)
  }
  if (letters.length !== refused || ids.size !== refused)
    throw new Error(
      `${table}: ${letters.length} deadletters for ${ids.size} rows; expected exactly the ${refused} spoiled ones`,
    )
}

function whatIsWrong(letter: Record<string, unknown>, id: number, expected: Expected): string | undefined {
  if (letter.namespace !== expected.namespace) return `of namespace ${String(letter.namespace)}`
  if (!isSpoiled(expected.spoiling, id)) return `for rental_id ${id}, which was not spoiled`
  if (expected.byLine && (letter.offset_key !== 'line' || Number(letter.offset_pos) !== id + 1))
    return `for rental_id ${id} not at line ${id + 1}`
  return undefined
}
