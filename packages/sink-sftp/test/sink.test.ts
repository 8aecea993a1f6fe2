import { createHash } from 'node:crypto'
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { allTypesSchema, makeBatch, objectRows, rawPart, trickyRows } from '@skippr/conformance'
import type { Sink, SinkBatch, WriteOutcome } from '@skippr/connector-api'
import { hasCode } from '@skippr/connector-api'
import { OBJECT_CONFLICT } from '@skippr/object-sink'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { sink as definition, SECRET_FIELDS } from '../src/index.js'
import { freshDir, loginConfig, type SshServer, sinkFrom, startSshd, storeOn } from './server.js'

let server: SshServer
beforeAll(async () => {
  server = await startSshd()
})
afterAll(() => server?.stop())

const opened: Sink[] = []
afterEach(async () => {
  for (const sink of opened.splice(0)) await sink.close()
})

/** A sink on `dir` with the prefix raw/skippr; closed after the case. */
async function sinkOn(dir: string, manifest: boolean): Promise<Sink> {
  const sink = await sinkFrom({ ...loginConfig(server, dir), prefix: 'raw/skippr', manifest })
  opened.push(sink)
  return sink
}

/** A sink on a fresh directory; `root` is where its files are on the server's disk. */
async function sinkOnFreshDir(options: { manifest?: boolean } = {}) {
  const dir = freshDir('sink')
  const manifest = options.manifest ?? false
  return { sink: await sinkOn(dir, manifest), dir, root: join(server.sftpRoot, dir, 'raw/skippr') }
}

/** Every file below `root` (dot files too), as relative paths, sorted. */
async function filesBelow(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true })
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
    .sort()
}

const rentals = allTypesSchema('rentals')
const stations = allTypesSchema('stations')
const batch = (seq: number): SinkBatch =>
  makeBatch({
    pipeline: 'bikehire',
    epoch: 'e1',
    seq,
    parts: [
      { schema: rentals, format: 'jsonl', rows: trickyRows(0) },
      { schema: stations, format: 'jsonl', rows: trickyRows(100).slice(0, 2) },
    ],
  })

function errorOf(outcome: WriteOutcome): Error {
  if (!('error' in outcome)) throw new Error(`expected an error, got ${outcome.status}`)
  return outcome.error
}

describe('the Sftp sink', () => {
  it('is the Sftp definition, overwrite-on-retry, with its credentials secret', () => {
    expect(definition).toMatchObject({ kind: 'sink', type: 'Sftp', guarantee: 'overwrite-on-retry' })
    expect(definition.secretFields).toEqual(['password', 'private_key', 'passphrase'])
    expect(SECRET_FIELDS).toBe(definition.secretFields)
  })

  it('writes one file per batch part at <prefix>/<namespace>/<pipeline>/<epoch>/<seq>-<part>.<ext> under path', async () => {
    const { sink, root } = await sinkOnFreshDir()
    await sink.prepare(rentals)
    expect(await sink.write(batch(7))).toEqual({ status: 'landed', rows: 7 })
    expect(await filesBelow(root)).toEqual([
      'rentals/bikehire/e1/000000000007-0.jsonl',
      'stations/bikehire/e1/000000000007-1.jsonl',
    ])
    const lines = (await readFile(join(root, 'rentals/bikehire/e1/000000000007-0.jsonl'), 'utf8'))
      .trimEnd()
      .split('\n')
    expect(lines.map((line) => (JSON.parse(line) as { id: number }).id)).toEqual([1, 2, 3, 4, 5])
  })

  it('writes a manifest after the objects, listing each with its rows, bytes and sha256', async () => {
    const { sink, root } = await sinkOnFreshDir({ manifest: true })
    await sink.prepare(rentals)
    expect(await sink.write(batch(8))).toEqual({ status: 'landed', rows: 7 })
    const manifest = JSON.parse(
      await readFile(join(root, '_manifests/bikehire/e1/000000000008.json'), 'utf8'),
    ) as {
      batch: string
      objects: { key: string; namespace: string; rows: number; bytes: number; sha256: string }[]
    }
    expect(manifest.batch).toBe('bikehire/e1/000000000008')
    expect(manifest.objects.map(({ key, namespace, rows }) => ({ key, namespace, rows }))).toEqual([
      { key: 'rentals/bikehire/e1/000000000008-0.jsonl', namespace: 'rentals', rows: 5 },
      { key: 'stations/bikehire/e1/000000000008-1.jsonl', namespace: 'stations', rows: 2 },
    ])
    for (const object of manifest.objects) {
      const bytes = await readFile(join(root, object.key))
      expect({ bytes: object.bytes, sha256: object.sha256 }).toEqual({
        bytes: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      })
    }
    expect(await filesBelow(root)).toEqual([
      '_manifests/bikehire/e1/000000000008.json',
      ...manifest.objects.map((object) => object.key),
    ])
  })

  it('a retry after a crash between create and ack is already-landed, or landed for what was missing; the files stay the same', async () => {
    const { sink, root, dir } = await sinkOnFreshDir({ manifest: true })
    await sink.prepare(rentals)
    expect(await sink.write(batch(9))).toEqual({ status: 'landed', rows: 7 })
    const files = await filesBelow(root)
    const contents = await Promise.all(files.map((file) => readFile(join(root, file))))
    await sink.close()

    const restarted = await sinkOn(dir, true)
    await restarted.prepare(rentals)
    expect(await restarted.write(batch(9))).toEqual({ status: 'already-landed' })
    // A crash after the first object: the retry creates the rest.
    await rm(join(root, 'stations/bikehire/e1/000000000009-1.jsonl'))
    await rm(join(root, '_manifests/bikehire/e1/000000000009.json'))
    expect(await restarted.write(batch(9))).toEqual({ status: 'landed', rows: 7 })
    expect(await filesBelow(root)).toEqual(files)
    expect(await Promise.all(files.map((file) => readFile(join(root, file))))).toEqual(contents)
  })

  it("an object of other bytes at a batch's key is fatal, SKIPPR_OBJECT_CONFLICT naming its location, and kept", async () => {
    const { sink, root, dir } = await sinkOnFreshDir()
    const key = 'rentals/bikehire/e1/000000000010-0.jsonl'
    await mkdir(join(root, key, '..'), { recursive: true })
    await writeFile(join(root, key), '{"someone":"else"}\n')
    await sink.prepare(rentals)
    const error = errorOf(await sink.write(batch(10)))
    expect(hasCode(error, OBJECT_CONFLICT)).toBe(true)
    const location = `sftp://${server.username}@${server.host}:${server.port}${server.sftpRoot}/${dir}/raw/skippr/${key}`
    expect(error.message).toContain(`${location} already exists with other contents`)
    expect(error.message).not.toContain('PRIVATE KEY')
    expect(await readFile(join(root, key), 'utf8')).toBe('{"someone":"else"}\n')
  })

  it('an empty batch part is an empty object', async () => {
    const { sink, root } = await sinkOnFreshDir()
    await sink.prepare(rentals)
    const empty = makeBatch({
      pipeline: 'bikehire',
      epoch: 'e1',
      seq: 11,
      parts: [rawPart(rentals, 'jsonl', '', 0)],
    })
    expect(await sink.write(empty)).toEqual({ status: 'landed', rows: 0 })
    expect((await stat(join(root, 'rentals/bikehire/e1/000000000011-0.jsonl'))).size).toBe(0)
  })

  it('names with /, % and unicode stay one directory level each, and read back', async () => {
    const { sink, root, dir } = await sinkOnFreshDir()
    const schema = allTypesSchema('sales/2024 50% ünï 🚲')
    await sink.prepare(schema)
    const odd = makeBatch({
      pipeline: 'p/q%',
      epoch: 'é/1',
      seq: 12,
      parts: [{ schema, format: 'jsonl', rows: trickyRows(0) }],
    })
    expect(await sink.write(odd)).toEqual({ status: 'landed', rows: 5 })
    expect(await filesBelow(root)).toEqual(['sales%2F2024 50%25 ünï 🚲/p%2Fq%25/é%2F1/000000000012-0.jsonl'])
    const reader = storeOn(server, `${dir}/raw/skippr`)
    try {
      expect((await objectRows(reader, schema.namespace)).map((row) => row.id)).toEqual([1, 2, 3, 4, 5])
    } finally {
      await reader.close()
    }
  })
})
