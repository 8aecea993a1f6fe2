/**
 * What `skipprd query` understands, one entry per statement: what `SHOW DOCS` lists and
 * `skipprd sql-help` prints (Markdown, HTML or JSON). Each example is parsed by the statement's
 * own parser in the tests, so the page cannot drift from what the prompt takes.
 */

export interface StatementDoc {
  /** The statement's name, as `sql-help --command` takes it (any case). */
  readonly command: string
  readonly syntax: string
  readonly summary: string
  readonly example: string
}

export const STATEMENT_DOCS: readonly StatementDoc[] = [
  {
    command: 'SELECT',
    syntax: 'SELECT … FROM <pipeline>.<namespace> …',
    summary:
      "DuckDB SQL over every pipeline's rows: each namespace is a table of the rows pending in the WAL (for a DuckDB data_sink, with the rows landed in it). Joins and aggregates across pipelines work.",
    example: 'SELECT member_type, count(*) FROM bikehire.rentals GROUP BY member_type',
  },
  {
    command: 'STREAM',
    syntax: 'STREAM <columns> FROM <pipeline>.<namespace> [WHERE …] [ORDER BY …] [LIMIT n]',
    summary:
      'A live tail of committed WAL rows: the rows pending now, then those of each batch as it is committed, until LIMIT rows or Ctrl-C. A batch committed and landed between two looks (every 250 ms) is not shown.',
    example: "STREAM rental_id, duration_s FROM bikehire.rentals WHERE member_type = 'casual' LIMIT 10",
  },
  {
    command: 'SHOW PIPELINE',
    syntax: 'SHOW PIPELINE <pipeline>',
    summary:
      'JSON: status, whether a sync is writing, the last run, namespaces and their schemas, offsets, and the WAL (pending batches, the oldest first, with their landing failures).',
    example: 'SHOW PIPELINE bikehire',
  },
  {
    command: 'SHOW STATS',
    syntax: 'SHOW STATS FOR <pipeline>[.<namespace>]',
    summary: 'Rows and bytes committed, landed and pending, and rows deadlettered, per namespace.',
    example: 'SHOW STATS FOR bikehire.rentals',
  },
  {
    command: 'SHOW DOCS',
    syntax: 'SHOW DOCS',
    summary: 'This list: every statement with its syntax and an example.',
    example: 'SHOW DOCS',
  },
  {
    command: 'ENABLE PIPELINE',
    syntax: 'ENABLE PIPELINE <pipeline>',
    summary: 'Lets sync run the pipeline again after DISABLE.',
    example: 'ENABLE PIPELINE bikehire',
  },
  {
    command: 'DISABLE PIPELINE',
    syntax: 'DISABLE PIPELINE <pipeline>',
    summary: "sync skips the pipeline (Pipeline '<name>' disabled, skipping.) until ENABLE.",
    example: 'DISABLE PIPELINE bikehire',
  },
  {
    command: 'RESET PIPELINE',
    syntax: 'RESET PIPELINE <pipeline>',
    summary:
      "Deletes the pipeline's WAL (every pending batch) and resume position and starts a new WAL epoch: the next sync reads the source from the start. Saved schemas stay. Refused while a sync holds the writer lease.",
    example: 'RESET PIPELINE bikehire',
  },
  {
    command: 'DROP PIPELINE',
    syntax: 'DROP PIPELINE <pipeline>',
    summary:
      'RESET, and forgets everything else saved for the pipeline: schemas, flags, last run, counters, its query cache. Refused while a sync holds the writer lease.',
    example: 'DROP PIPELINE bikehire',
  },
  {
    command: 'DEADLETTER BATCH',
    syntax: 'DEADLETTER BATCH <seq> IN PIPELINE <pipeline>',
    summary:
      "Moves the oldest pending batch, one no retry can land, whole to the pipeline's deadletter_sink and marks it landed.",
    example: 'DEADLETTER BATCH 42 IN PIPELINE bikehire',
  },
  {
    command: 'DISCARD BATCH',
    syntax: 'DISCARD BATCH <seq> IN PIPELINE <pipeline>',
    summary: 'Drops the oldest pending batch without landing it (logged with its row count).',
    example: 'DISCARD BATCH 42 IN PIPELINE bikehire',
  },
  {
    command: 'SCHEMA DUMP',
    syntax: "SCHEMA DUMP <pipeline>[.<namespace>] TO '<path>'",
    summary:
      'Writes the saved schema as {"fields":[{"name","field_type","nullable"}]} (every namespace: {"namespaces":{…}}).',
    example: "SCHEMA DUMP bikehire.rentals TO 'rentals.schema.json'",
  },
  {
    command: 'LOAD SCHEMA',
    syntax: "LOAD SCHEMA '<path>' INTO <pipeline>[.<namespace>]",
    summary:
      "Replaces the namespace's field list from such a file, as a new schema version, as metadata apply does.",
    example: "LOAD SCHEMA 'rentals.schema.json' INTO bikehire.rentals",
  },
  {
    command: 'ALTER TABLE',
    syntax:
      'ALTER TABLE <pipeline>.<namespace> DROP COLUMN c | ALTER COLUMN c TYPE <type> | RENAME COLUMN a TO b | MERGE COLUMN a INTO b',
    summary:
      'Changes the saved schema; the next sync reads the source by it. Types only widen; primary-key columns stay; RENAME and MERGE wait until no rows of the namespace are pending.',
    example: 'ALTER TABLE bikehire.rentals RENAME COLUMN distance_km TO distance',
  },
]

/** Whether `statement` (comments stripped, trimmed) is SHOW DOCS. */
export function isShowDocs(statement: string): boolean {
  return /^SHOW\s+DOCS$/i.test(statement)
}

export type DocFormat = 'md' | 'html' | 'json'
export const DOC_FORMATS: readonly DocFormat[] = ['md', 'html', 'json']

/** The entry named `command` (any case, spaces as typed), or undefined. */
export function statementDoc(command: string): StatementDoc | undefined {
  const wanted = command.trim().replace(/\s+/g, ' ').toUpperCase()
  return STATEMENT_DOCS.find((doc) => doc.command === wanted)
}

/** `docs` as a page in `format`. */
export function renderDocs(docs: readonly StatementDoc[], format: DocFormat): string {
  switch (format) {
    case 'json':
      return `${JSON.stringify(docs, null, 2)}\n`
    case 'md':
      return docs.map(markdown).join('\n')
    case 'html':
      return `<dl>\n${docs.map(html).join('')}</dl>\n`
  }
}

function markdown(doc: StatementDoc): string {
  return `## ${doc.command}\n\n\`\`\`sql\n${doc.syntax}\n\`\`\`\n\n${doc.summary}\n\nExample:\n\n\`\`\`sql\n${doc.example};\n\`\`\`\n`
}

function html(doc: StatementDoc): string {
  return (
    `  <dt id="${escapeHtml(doc.command.toLowerCase().replaceAll(' ', '-'))}"><code>${escapeHtml(doc.syntax)}</code></dt>\n` +
    `  <dd><p>${escapeHtml(doc.summary)}</p><pre><code>${escapeHtml(doc.example)};</code></pre></dd>\n`
  )
}

function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
}
