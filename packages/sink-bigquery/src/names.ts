/** Names the sink gives BigQuery: quoted identifiers, job ids from batch identities, staging tables. */
import { createHash } from 'node:crypto'

/** A GoogleSQL identifier in backticks (backslash escapes): source names are always quoted. */
export function ident(name: string): string {
  return `\`${name.replaceAll('\\', '\\\\').replaceAll('`', '\\`')}\``
}

/** `project`.`dataset`.`table`. */
export function tablePath(project: string, dataset: string, table: string): string {
  return `${ident(project)}.${ident(dataset)}.${ident(table)}`
}

const shortHash = (text: string | Uint8Array) => createHash('sha256').update(text).digest('hex').slice(0, 16)

/**
 * The load job id of a part: `skippr_<pipeline>_<epoch>_<seq>_<part>` with every character BigQuery
 * refuses in a job id (letters, digits, `_` and `-` only) made `_`, then a hash of the destination
 * table and of the part's bytes. So a retry of the same bytes reuses the id (and finds the job),
 * two tables never share one, and a batch written again with other bytes (its refused rows taken
 * out) is another load.
 */
export function loadJobId(
  key: { pipeline: string; epoch: string; seq: bigint; part: number },
  table: string,
  body: Uint8Array,
): string {
  const readable = `skippr_${key.pipeline}_${key.epoch}_${key.seq}_${key.part}`
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .slice(0, 900)
  return `${readable}_${shortHash(`${table}\u0000${key.pipeline}\u0000${key.epoch}`)}_${shortHash(body)}`
}

/** The staging table a part is loaded into before the batch's transaction copies it. */
export function stagingTable(jobId: string): string {
  return `_skippr_stage_${jobId}`.slice(0, 1024)
}
