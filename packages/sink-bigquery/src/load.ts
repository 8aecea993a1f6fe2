/**
 * One load job: a part's body uploaded (the SDK's multipart upload) into a table under a job id the
 * caller derives from the batch identity. A job id BigQuery already holds answers 409: that job is
 * fetched and its result used, so a retry after a lost response never loads the bytes twice.
 */
import type { BigQuery, Job, JobMetadata, TableField } from '@google-cloud/bigquery'
import type { RecordFormat } from '@skippr/connector-api'
import { httpStatus } from './errors.js'

export interface LoadRequest {
  readonly dataset: string
  readonly table: string
  readonly jobId: string
  readonly format: RecordFormat
  readonly fields: readonly TableField[]
  readonly body: Uint8Array
}

/** A finished job: its row count, or its errorResult and the per-record errors. */
export type LoadResult =
  | { readonly ok: true; readonly outputRows: number; readonly reused: boolean }
  | {
      readonly ok: false
      readonly reused: boolean
      readonly errorResult: { reason?: string; message?: string }
      readonly errors: readonly { reason?: string; message?: string }[]
    }

const POLL_MS = 250

/** Runs the load (or finds the job of that id) and waits for it to be DONE. */
export async function runLoad(client: BigQuery, request: LoadRequest): Promise<LoadResult> {
  let metadata: JobMetadata
  let reused = false
  try {
    metadata = await upload(client, request)
  } catch (error) {
    // The id is taken: by this load before its response was lost, or by the SDK's own retry.
    if (httpStatus(error) !== 409) throw error
    reused = true
    ;[metadata] = await client.job(request.jobId).getMetadata()
  }
  return finished(await untilDone(client.job(request.jobId), metadata), reused)
}

function upload(client: BigQuery, request: LoadRequest): Promise<JobMetadata> {
  const table = client.dataset(request.dataset).table(request.table)
  return new Promise((resolve, reject) => {
    const stream = table.createWriteStream_({
      jobId: request.jobId,
      sourceFormat: request.format === 'csv' ? 'CSV' : 'NEWLINE_DELIMITED_JSON',
      schema: { fields: [...request.fields] },
      createDisposition: 'CREATE_IF_NEEDED',
      writeDisposition: 'WRITE_TRUNCATE',
      ...(request.format === 'csv' ? { allowQuotedNewlines: true, quote: '"', encoding: 'UTF-8' } : {}),
    })
    stream.once('error', reject)
    stream.once('job', (job: Job | null) => {
      if (job?.metadata) resolve(job.metadata as JobMetadata)
      else reject(new Error('the upload answered without a job'))
    })
    stream.end(Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength))
  })
}

async function untilDone(job: Job, first: JobMetadata): Promise<JobMetadata> {
  let metadata = first
  while (metadata.status?.state !== 'DONE') {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    ;[metadata] = await job.getMetadata()
  }
  return metadata
}

function finished(metadata: JobMetadata, reused: boolean): LoadResult {
  const status = metadata.status
  if (status?.errorResult)
    return {
      ok: false,
      reused,
      errorResult: status.errorResult,
      errors: status.errors ?? [status.errorResult],
    }
  return { ok: true, reused, outputRows: Number(metadata.statistics?.load?.outputRows ?? 0) }
}
