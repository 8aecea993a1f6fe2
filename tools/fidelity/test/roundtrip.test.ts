/**
 * The round-trip property: generated tables of every field type, edge values in every run, written
 * as each source format, synced by the built skipprd into each sink and compared value by value.
 */
import { describe, it } from 'vitest'
import { caseArbitrary, writeCase } from '../src/cases.js'
import { databasePerFile } from '../src/postgres.js'
import { assertRoundTrips } from '../src/property.js'
import { syncAndCompare, withRunDir } from '../src/roundtrip.js'
import { SINK_KINDS } from '../src/sinks.js'
import { SOURCE_KINDS } from '../src/sources.js'
import { sinkTarget } from '../src/targets.js'

const sourceDatabase = databasePerFile('source')
const sinkDatabase = databasePerFile('sink')

describe.each(SOURCE_KINDS)('%s source', (source) => {
  it.each(SINK_KINDS)('into %s: every generated value lands exactly', async (sink) => {
    await assertRoundTrips(caseArbitrary(source), (c) =>
      withRunDir(async (dir) =>
        syncAndCompare(
          dir,
          await writeCase(source, dir, c, sourceDatabase()),
          sinkTarget(sink, dir, sinkDatabase()),
        ),
      ),
    )
  })
})
