/**
 * The object audit must pass the object set a healthy sink leaves and catch what may not be
 * there: a temporary file, a key outside the prefix or the layout, a gap in a batch's parts, a
 * batch without its manifest, and a manifest that lists other objects or other bytes, rows or
 * checksums than the objects have. Each case starts from a valid set of two batches and changes it.
 */
import { sha256 } from '@skippr/object-sink'
import { describe, expect, test } from 'vitest'
import { auditObjects, type ObjectLayout, type ReadBack, sortKeys } from '../src/index.js'

const LAYOUT: ObjectLayout = {
  prefix: 'raw/chaos',
  namespace: 'rentals',
  pipeline: 'bikehire',
  extension: 'csv.gz',
  manifest: true,
}
const EPOCH = '0123456789abcdef'
const batch = (seq: number) => `bikehire/${EPOCH}/${String(seq).padStart(12, '0')}`
const dataKey = (seq: number, part: number) => `rentals/${batch(seq)}-${part}.csv.gz`
const manifestKey = (seq: number) => `_manifests/${batch(seq)}.json`

/** A valid object set: batch 1 of two parts, batch 2 of one, each with its manifest. */
function validSet(): Map<string, ReadBack> {
  const objects = new Map<string, ReadBack>()
  const parts: Record<number, number[]> = { 1: [0, 1], 2: [0] }
  for (const [seq, indexes] of Object.entries(parts)) {
    const entries = indexes.map((part) => {
      const bytes = new TextEncoder().encode(`object ${seq}-${part}`)
      const key = dataKey(Number(seq), part)
      objects.set(key, { bytes, rows: 10 + part })
      return { key, namespace: 'rentals', rows: 10 + part, bytes: bytes.length, sha256: sha256([bytes]) }
    })
    setManifest(objects, Number(seq), { batch: batch(Number(seq)), objects: entries })
  }
  return objects
}

function setManifest(objects: Map<string, ReadBack>, seq: number, manifest: unknown): void {
  objects.set(manifestKey(seq), { bytes: new TextEncoder().encode(JSON.stringify(manifest)), rows: 0 })
}

function manifestOf(objects: Map<string, ReadBack>, seq: number) {
  return JSON.parse(new TextDecoder().decode(objects.get(manifestKey(seq))?.bytes)) as {
    batch: string
    objects: { key: string; rows: number; bytes: number; sha256: string }[]
  }
}

/** The audit of `objects` (keys relative to the prefix) plus `extraKeys` as listed from the top. */
async function audit(objects: Map<string, ReadBack>, extraKeys: string[] = [], layout = LAYOUT) {
  const keys = [...[...objects.keys()].map((key) => `${layout.prefix}/${key}`), ...extraKeys]
  const read = async (key: string) => {
    const object = objects.get(key)
    if (!object) throw new Error(`no object ${key}`)
    return object
  }
  return auditObjects(sortKeys(keys, layout), layout, read)
}

describe('auditObjects', () => {
  test('passes the objects and manifests of complete batches', async () => {
    expect(await audit(validSet())).toEqual([])
  })

  test('sorts the keys into data objects by batch and part, and manifests by batch', () => {
    const keys = [...validSet().keys()].map((key) => `raw/chaos/${key}`)
    const sorted = sortKeys(keys, LAYOUT)
    expect(sorted.data.map((o) => [o.batch, o.part])).toEqual([
      [batch(1), 0],
      [batch(1), 1],
      [batch(2), 0],
    ])
    expect([...sorted.manifests.keys()]).toEqual([batch(1), batch(2)])
    expect(sorted.stray).toEqual([])
  })

  test.for<[string, string]>([
    ['a temporary file', `raw/chaos/rentals/bikehire/${EPOCH}/.000000000003-0.csv.gz.0123456789abcdef.tmp`],
    ['a key outside the prefix', `rentals/${batch(3)}-0.csv.gz`],
    ['a key of another extension', `raw/chaos/rentals/${batch(3)}-0.jsonl`],
    ['a key of another pipeline', `raw/chaos/rentals/orders/${EPOCH}/000000000003-0.csv.gz`],
    ['a seq not of 12 digits', `raw/chaos/rentals/bikehire/${EPOCH}/3-0.csv.gz`],
    ['a probe file in the root', 'raw/chaos/.skippr-write-check.0123456789abcdef.tmp'],
  ])('names %s as a stray', async ([, key]) => {
    expect(await audit(validSet(), [key])).toEqual([`1 objects the key layout does not name: ${key}`])
  })

  test('names a manifest as a stray where the sink writes none', async () => {
    const objects = validSet()
    const problems = await audit(objects, [], { ...LAYOUT, manifest: false })
    expect(problems).toEqual([
      `2 objects the key layout does not name: raw/chaos/${manifestKey(1)}, raw/chaos/${manifestKey(2)}`,
    ])
  })

  test('names a batch whose parts have a gap', async () => {
    const objects = validSet()
    const [first] = objects.values()
    objects.set(dataKey(2, 2), first as ReadBack)
    expect(await audit(objects)).toContain(`batches whose parts are not numbered 0..n-1: ${batch(2)} (0, 2)`)
  })

  test('names a batch without its manifest', async () => {
    const objects = validSet()
    objects.delete(manifestKey(2))
    expect(await audit(objects)).toEqual([`1 batches without a manifest: ${batch(2)}`])
  })

  test('names a manifest that leaves out one of its batch objects', async () => {
    const objects = validSet()
    const manifest = manifestOf(objects, 1)
    setManifest(objects, 1, { ...manifest, objects: manifest.objects.slice(0, 1) })
    expect(await audit(objects)).toEqual([
      `manifest ${manifestKey(1)}: lists ${dataKey(1, 0)}; the batch's objects are ${dataKey(1, 0)}, ${dataKey(1, 1)}`,
    ])
  })

  test.for(['sha256', 'bytes', 'rows'] as const)(
    'names a manifest whose %s differs from the object',
    async (field) => {
      const objects = validSet()
      const manifest = manifestOf(objects, 1)
      const [entry] = manifest.objects
      const wrong = { ...entry, [field]: field === 'sha256' ? sha256([new Uint8Array([1])]) : 9999 }
      setManifest(objects, 1, { ...manifest, objects: [wrong, ...manifest.objects.slice(1)] })
      const [problem] = await audit(objects)
      expect(problem).toMatch(new RegExp(`^manifest ${manifestKey(1)}: ${dataKey(1, 0)} has ${field} `))
    },
  )

  test('names a manifest for another batch than its key', async () => {
    const objects = validSet()
    setManifest(objects, 2, { ...manifestOf(objects, 2), batch: batch(1) })
    expect(await audit(objects)).toEqual([
      `manifest ${manifestKey(2)}: names batch ${batch(1)}, its key says ${batch(2)}`,
    ])
  })
})
