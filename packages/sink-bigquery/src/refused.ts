/**
 * Finding the records of a part that BigQuery refuses for their values. A load job refuses its whole
 * body and names bad records by byte offset in messages whose form is not documented, so the sink
 * asks BigQuery itself: it loads halves of the part into a scratch table until each refused record
 * stands alone (a handful of loads per bad record), and reports that record's error.
 */
import { randomUUID } from 'node:crypto'
import type { BigQuery, TableField } from '@google-cloud/bigquery'
import type { BatchPart, RefusedRow } from '@skippr/connector-api'
import { recordRanges } from '@skippr/connector-api'
import { type LoadResult, runLoad } from './load.js'

/** Whether a failed load was refused for the data it read (not for its table or its rights). */
export function refusedForData(result: LoadResult): boolean {
  return (
    !result.ok &&
    result.errorResult.reason === 'invalid' &&
    /Error while reading data/.test(result.errorResult.message ?? '')
  )
}

export async function findRefusedRows(
  client: BigQuery,
  dataset: string,
  partIndex: number,
  part: BatchPart,
  fields: readonly TableField[],
): Promise<RefusedRow[]> {
  const ranges = recordRanges(part.body, part.format)
  const scratch = `_skippr_probe_${randomUUID().replaceAll('-', '')}`
  const refused: RefusedRow[] = []
  const probe = async (rows: number[]): Promise<LoadResult> => {
    const body = Buffer.concat(
      rows.map((row) => {
        const [start, end] = ranges[row] as [number, number]
        return Buffer.concat([part.body.subarray(start, end), Buffer.from('\n')])
      }),
    )
    return runLoad(client, {
      dataset,
      table: scratch,
      jobId: `skippr_probe_${randomUUID()}`,
      format: part.format,
      fields,
      body,
    })
  }
  const search = async (rows: number[]): Promise<void> => {
    if (rows.length === 0) return
    const result = await probe(rows)
    if (result.ok || !refusedForData(result)) return
    if (rows.length === 1) {
      const detail =
        result.errors.find((e) => e.message && e.message !== result.errorResult.message) ?? result.errorResult
      refused.push({
        part: partIndex,
        row: rows[0] as number,
        error: (detail.message ?? '').replace(/\s+/g, ' '),
        code: detail.reason ?? 'invalid',
      })
      return
    }
    const half = Math.ceil(rows.length / 2)
    await search(rows.slice(0, half))
    await search(rows.slice(half))
  }
  try {
    await search(ranges.map((_, i) => i))
  } finally {
    await client
      .dataset(dataset)
      .table(scratch)
      .delete()
      .catch(() => {})
  }
  return refused
}
