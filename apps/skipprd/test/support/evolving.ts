/**
 * Pipelines whose schema evolves mid-run. Two JSON-lines files, the second bringing a new key
 * (`score`), read in small chunks so the new schema version arrives between batches; or one file
 * whose new key first appears far past the sample its types are inferred from.
 */
import type { Project } from './project.js'

export const EVOLVING_ROWS = 3000

export async function writeEvolvingItems(p: Project, sink: string): Promise<void> {
  await writeFiles(p, sink, false)
}

/** One 3,000-record file whose `score` key first appears at record 2,990, past the 256 KiB sample. */
export async function writeLateKeyItems(p: Project, sink: string): Promise<void> {
  await writeFiles(p, sink, true)
}

async function writeFiles(p: Project, sink: string, oneFile: boolean): Promise<void> {
  const half = EVOLVING_ROWS / 2
  const lines = (from: number, withScore: boolean) =>
    Array.from({ length: half }, (_, i) => {
      const id = from + i
      return `${JSON.stringify(withScore ? { id, name: `n${id}`, score: id / 2 } : { id, name: `n${id}` })}\n`
    }).join('')
  if (oneFile) {
    // Padding makes the first 2,989 records outgrow the sample.
    const records = Array.from({ length: EVOLVING_ROWS }, (_, i) => {
      const id = i + 1
      const base = { id, name: `n${id}`, padding: 'x'.repeat(100) }
      return `${JSON.stringify(id >= 2990 ? { ...base, score: id / 2 } : base)}\n`
    })
    await p.write('items-1.jsonl', records.join(''))
  } else {
    await p.write('items-1.jsonl', lines(1, false))
    await p.write('items-2.jsonl', lines(half + 1, true))
  }
  await p.write(
    'skippr.yml',
    [
      'data_sources:',
      '  items:',
      // Small chunks put the two files' schema versions in different batches; the late key needs
      // none (its types are sampled from the block that brings it).
      `    File: { path: './items-*.jsonl', format: jsonl${oneFile ? '' : ', chunk_bytes: 4096'} }`,
      'data_sinks:',
      '  warehouse:',
      `    ${sink}`,
      'pipelines:',
      '  bikehire:',
      '    data_source: data_sources.items',
      '    data_sink: data_sinks.warehouse',
      '',
    ].join('\n'),
  )
}

/** Small batches, so that several are in flight around the schema change. */
export const EVOLVING_ENV = { BUFFER_THRESHOLD_BYTES: '8000' }

/** What the destination must hold: every row once, `score` on exactly the second file's rows. */
export const EVOLVING_EXPECTED = {
  rows: EVOLVING_ROWS,
  uniq: EVOLVING_ROWS,
  scored: EVOLVING_ROWS / 2,
  first_scored: EVOLVING_ROWS / 2 + 1,
}

/** The SQL that reads those four figures from the `items` table, in both destinations' dialect. */
export const evolvingCounts = (table: string) =>
  `SELECT count(*)::int AS rows, count(DISTINCT id)::int AS uniq, count(score)::int AS scored,
          (min(id) FILTER (WHERE score IS NOT NULL))::int AS first_scored FROM ${table}`
