import { execFile, spawn } from 'node:child_process'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import { makeBatch, rawPart } from '@skippr/conformance'
import { BAD_RECORD, hasCode, parseConnectorConfig, ROW_COUNT_MISMATCH } from '@skippr/connector-api'
import { describe, expect, it } from 'vitest'
import type { Output } from '../src/index.js'
import { sink as definition, StdoutSink } from '../src/index.js'

const fixture = path.join(import.meta.dirname, 'fixtures', 'print-batches.mjs')
const run = promisify(execFile)

async function printed(format: string): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [fixture, format, '1'])
}

describe('StdoutSink on the real stdout', () => {
  it('prints each part as it arrives by default, csv with a header row', async () => {
    const { stdout, stderr } = await printed('as-is')
    expect(stdout).toBe('"id","note"\n1,"x, ""y"""\n2,\n{"ok":true,"doc":{"k":[1]}}\n')
    expect(stderr).toBe('{"status":"landed"}\n')
  })

  it('format csv: every part as csv with its header', async () => {
    expect((await printed('csv')).stdout).toBe(
      '"id","note"\n1,"x, ""y"""\n2,\n"ok","doc"\ntrue,"{""k"":[1]}"\n',
    )
  })

  it('format jsonl: every part as typed JSON lines', async () => {
    expect((await printed('jsonl')).stdout).toBe(
      '{"id":1,"note":"x, \\"y\\""}\n{"id":2,"note":null}\n{"ok":true,"doc":{"k":[1]}}\n',
    )
  })

  it('a reader that closes the pipe makes the next write fatal, not a crash', async () => {
    const child = spawn(process.execPath, [fixture, 'jsonl', '100000'], { stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.once('data', () => child.stdout.destroy())
    const outcomes: string[] = []
    for await (const line of createInterface({ input: child.stderr })) outcomes.push(line)
    expect(outcomes.at(-1)).toBe('{"status":"fatal","code":"SKIPPR_STDOUT_CLOSED"}')
    expect(outcomes.slice(0, -1).every((line) => line === '{"status":"landed"}')).toBe(true)
  })
})

/** An output that keeps what is printed. */
function memoryOutput(): { out: Output; chunks: Uint8Array[] } {
  const chunks: Uint8Array[] = []
  const out: Output = {
    write(chunk, done) {
      chunks.push(chunk)
      done()
      return true
    },
  }
  return { out, chunks }
}

describe('StdoutSink', () => {
  it('a record that does not match its schema is fatal and prints nothing', async () => {
    const { out, chunks } = memoryOutput()
    const schema = { namespace: 'n', fields: [{ name: 'id', type: 'int' as const }] }
    const outcome = await new StdoutSink({ format: 'jsonl' }, out).write(
      makeBatch({ pipeline: 'p', seq: 1, parts: [rawPart(schema, 'csv', '1\nabc\n', 2)] }),
    )
    expect(outcome.status).toBe('fatal')
    expect(hasCode((outcome as { error: Error }).error, BAD_RECORD)).toBe(true)
    expect(chunks).toEqual([])
  })

  it('a part whose records differ from its declared count is fatal, names the batch, prints nothing', async () => {
    const schema = { namespace: 'n', fields: [{ name: 'v', type: 'string' as const }] }
    for (const [format, part] of [
      [undefined, rawPart(schema, 'csv', '"a"\n"b"\n', 3)],
      ['csv', rawPart(schema, 'jsonl', '{"v":"a"}\n{"v":"b"}\n', 1)],
    ] as const) {
      const { out, chunks } = memoryOutput()
      // A good part first: it must not be printed either.
      const parts = [rawPart(schema, 'csv', '"ok"\n', 1), part]
      const outcome = await new StdoutSink({ format }, out).write(makeBatch({ pipeline: 'p', seq: 1, parts }))
      expect(outcome.status).toBe('fatal')
      expect((outcome as { error: Error }).error).toMatchObject({
        code: ROW_COUNT_MISMATCH,
        batch: 'p/epoch-1/000000000001',
        expected: part.rows,
        loaded: 2,
      })
      expect(chunks).toEqual([])
    }
  })

  it('prints a line holding only \\. as the text \\., with every row after it', async () => {
    const { out, chunks } = memoryOutput()
    const schema = { namespace: 'n', fields: [{ name: 'v', type: 'string' as const }] }
    const batch = makeBatch({ pipeline: 'p', seq: 1, parts: [rawPart(schema, 'csv', 'a\n\\.\nb\nc\n', 4)] })
    expect(await new StdoutSink({ format: 'jsonl' }, out).write(batch)).toEqual({ status: 'landed', rows: 4 })
    expect(Buffer.concat(chunks).toString()).toBe('{"v":"a"}\n{"v":"\\\\."}\n{"v":"b"}\n{"v":"c"}\n')
  })

  it('config: format is optional and must be jsonl or csv', () => {
    const at = { file: 'skippr.yml', path: 'data_sinks.debug.Stdout' }
    expect(parseConnectorConfig(definition, undefined, at)).toEqual({})
    expect(() => parseConnectorConfig(definition, { format: 'tsv' }, at)).toThrow(
      'skippr.yml: data_sinks.debug.Stdout.format:',
    )
  })
})
