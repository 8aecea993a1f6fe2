import { encodeCsv, type Sink } from '@skippr/connector-api'
import { allTypesSchema } from './fixtures.js'

/**
 * The writer side of a sink's SIGKILL test, run in a child process: prepares the `crash` namespace,
 * prints `ready`, then writes batches seq = from..to of `perBatch` rows each (quotes, commas and
 * newlines in the values) and prints `<outcome> <seq>` after each, until the parent kills it.
 */
export async function writeCrashBatches(
  sink: Sink,
  from: number,
  to: number,
  perBatch: number,
): Promise<void> {
  const schema = allTypesSchema('crash')
  await sink.prepare(schema)
  process.stdout.write('ready\n')
  for (let seq = from; seq <= to; seq++) {
    const rows = Array.from({ length: perBatch }, (_, i) => ({
      id: seq * perBatch + i,
      name: `row ${i}, "quoted"\nsecond line`,
      qty: i,
      at: '2024-02-29T12:34:56.789Z',
    }))
    const body = encodeCsv(rows, schema.fields)
    const part = {
      namespace: 'crash',
      schemaVersion: 1,
      format: 'csv' as const,
      rows: rows.length,
      body,
      schema,
    }
    const outcome = await sink.write({
      id: { pipeline: 'crash', epoch: 'e', seq: BigInt(seq) },
      fence: 1n,
      parts: [part],
    })
    process.stdout.write(`${outcome.status} ${seq}\n`)
  }
}
