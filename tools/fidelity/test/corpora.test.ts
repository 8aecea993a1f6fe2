/**
 * Public corpora through the File source into each sink: csv-spectrum against its expected JSON,
 * vega-datasets against DuckDB's own reading of the same file. One test per file and sink, so the
 * outcome of each file shows by name.
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { type CorpusFile, csvSpectrumFiles, vegaFiles } from '../src/corpora.js'
import { databasePerFile } from '../src/postgres.js'
import { syncAndCompare, withRunDir } from '../src/roundtrip.js'
import { SINK_KINDS, type SinkKind } from '../src/sinks.js'
import { NAMESPACE } from '../src/table.js'
import { sinkTarget } from '../src/targets.js'

const sinkDatabase = databasePerFile('sink')

async function landsExactly(file: CorpusFile, sink: SinkKind, emptyIsNull: boolean): Promise<string[]> {
  return withRunDir(async (dir) => {
    const name = `${NAMESPACE}.${file.format}`
    await writeFile(path.join(dir, name), file.body)
    const source = {
      entry: { File: { path: name, format: file.format } },
      env: {},
      ...(await file.expected()),
    }
    return syncAndCompare(dir, source, sinkTarget(sink, dir, sinkDatabase()), { emptyIsNull })
  })
}

const cases = (files: readonly CorpusFile[]) =>
  files.flatMap((file) => SINK_KINDS.map((sink) => ({ file, sink, label: `${file.name} into ${sink}` })))

describe('csv-spectrum: every file lands as its expected JSON', () => {
  it.each(cases(csvSpectrumFiles()))('$label', async ({ file, sink }) => {
    expect(await landsExactly(file, sink, true)).toEqual([])
  })
})

describe("vega-datasets: every file lands as DuckDB's own reading of it", () => {
  it.each(cases(vegaFiles()))('$label', async ({ file, sink }) => {
    expect(await landsExactly(file, sink, false)).toEqual([])
  })
})
