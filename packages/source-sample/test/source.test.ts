import { hasCode, parseConnectorConfig, type SourceChunk, type SourceOffset } from '@skippr/connector-api'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BikehireEncoder, bikehireSchema } from '../src/bikehire.js'
import { SAMPLE_OFFSET_INVALID } from '../src/errors.js'
import { source } from '../src/index.js'

const at = { file: 'skippr.yml', path: 'data_sources.sample.Sample' }
const decoder = new TextDecoder()

function sample(raw: Record<string, unknown>) {
  return source.create(parseConnectorConfig(source, { dataset: 'bikehire', ...raw }, at), {
    configDir: '.',
    dataDir: '.',
    pipeline: 'test',
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  })
}

async function readAll(
  raw: Record<string, unknown>,
  from?: SourceOffset,
  options: { follow?: boolean; signal?: AbortSignal; stopAfter?: number } = {},
): Promise<SourceChunk[]> {
  const chunks: SourceChunk[] = []
  const signal = options.signal ?? new AbortController().signal
  for await (const chunk of (await sample(raw)).read(from, { signal, follow: options.follow ?? false })) {
    chunks.push(chunk)
    if (chunks.length === options.stopAfter) break
  }
  return chunks
}

const text = (chunks: SourceChunk[]) => chunks.map((c) => decoder.decode(c.body)).join('')

describe('Sample source', () => {
  it('discovers the bikehire schema', async () => {
    expect(await (await sample({ rows: 1 })).discover()).toEqual([bikehireSchema])
  })

  it('emits `rows` rows of headerless CSV in chunks of batch_rows, offset = rows so far', async () => {
    const chunks = await readAll({ rows: 25_000, seed: 4, batch_rows: 10_000 })
    expect(chunks.map((c) => [c.namespace, c.format, c.rows, c.offset])).toEqual([
      ['rentals', 'csv', 10_000, { row: 10_000 }],
      ['rentals', 'csv', 10_000, { row: 20_000 }],
      ['rentals', 'csv', 5_000, { row: 25_000 }],
    ])
    const all = text(chunks)
    expect(all.split('\n')).toHaveLength(25_001)
    expect(all).toBe(decoder.decode(new BikehireEncoder(4, 'csv').encode(0, 25_000)))
  })

  it('ends after `rows` rows in follow mode too: the dataset is finite', async () => {
    const chunks = await readAll({ rows: 1500, batch_rows: 1000 }, undefined, { follow: true })
    expect(chunks.map((c) => c.rows)).toEqual([1000, 500])
  })

  it('resumed at any offset it gave, yields the same bytes as one uninterrupted read', async () => {
    const config = { rows: 7_777, seed: 11, batch_rows: 500 }
    const whole = text(await readAll(config))
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 6 }),
        async (runs) => {
          // Each run reads a few chunks and stops, as a killed process would; the next resumes.
          let offset: SourceOffset | undefined
          let joined = ''
          for (const stopAfter of runs) {
            const chunks = await readAll(config, offset, { stopAfter })
            joined += text(chunks)
            offset = chunks.at(-1)?.offset ?? offset
          }
          joined += text(await readAll(config, offset))
          expect(joined).toBe(whole)
        },
      ),
      { numRuns: Number(process.env.SKIPPR_PROPERTY_RUNS ?? 25) },
    )
  })

  it('resumes from any row, not only chunk boundaries', async () => {
    const whole = text(await readAll({ rows: 3000, batch_rows: 700 })).split('\n')
    const resumed = text(await readAll({ rows: 3000, batch_rows: 700 }, { row: 1234 })).split('\n')
    expect(resumed).toEqual(whole.slice(1234))
  })

  it('yields only the new rows after rows is raised', async () => {
    const first = await readAll({ rows: 1000 })
    const more = await readAll({ rows: 1600 }, first.at(-1)!.offset)
    expect(text([...first, ...more])).toBe(text(await readAll({ rows: 1600 })))
    expect(await readAll({ rows: 1000 }, { row: 1000 })).toEqual([])
  })

  it('stops when the signal aborts', async () => {
    const controller = new AbortController()
    const chunks: SourceChunk[] = []
    const reading = (await sample({ rows: 100_000, batch_rows: 1000 })).read(undefined, {
      signal: controller.signal,
      follow: true,
    })
    for await (const chunk of reading) {
      chunks.push(chunk)
      if (chunks.length === 3) controller.abort()
    }
    expect(chunks).toHaveLength(3)
  })

  it('refuses an offset it did not write, naming the fix', async () => {
    for (const bad of [{ files: {} }, { row: -1 }, { row: 1.5 }, 'x', [1]] as SourceOffset[]) {
      const error = await readAll({ rows: 10 }, bad).catch((e: unknown) => e)
      expect(hasCode(error, SAMPLE_OFFSET_INVALID)).toBe(true)
      expect((error as Error).message).toMatch(/reset the pipeline/)
    }
  })

  it('counts the rows a read from the start gives, and none of another namespace', async () => {
    const counted = await sample({ rows: 2345, batch_rows: 1000 })
    const read = (await readAll({ rows: 2345, batch_rows: 1000 })).reduce((sum, chunk) => sum + chunk.rows, 0)
    expect(await counted.count?.('rentals')).toBe(read)
    expect(read).toBe(2345)
    expect(await counted.count?.('other')).toBe(0)
  })

  it('validates its config with one-line errors naming the path', () => {
    const parse = (raw: unknown) => () => parseConnectorConfig(source, raw, at)
    expect(parse({ dataset: 'bikehire', rows: 48213 })()).toEqual({ dataset: 'bikehire', rows: 48213 })
    expect(parse({ dataset: 'bikehire', rows: 10, colour: 'red' })).toThrow(
      'skippr.yml: data_sources.sample.Sample: unknown key colour: remove it or check its spelling',
    )
    expect(parse({ dataset: 'taxis', rows: 10 })).toThrow(/data_sources\.sample\.Sample\.dataset: .*bikehire/)
    expect(parse({ dataset: 'bikehire', rows: -1 })).toThrow(/Sample\.rows: /)
    expect(parse({ dataset: 'bikehire', rows: 10, batch_rows: 0 })).toThrow(/Sample\.batch_rows: /)
  })
})
