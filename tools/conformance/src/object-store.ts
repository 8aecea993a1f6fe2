/**
 * The contract every `ObjectStore` (@skippr/object-sink) keeps, run by each store package against
 * its real server: objects are created whole, once where the server honours the condition, listed
 * and read back byte for byte, and keys taken from source data stay distinct.
 */
import { randomBytes } from 'node:crypto'
import type { ObjectInfo, ObjectStore } from '@skippr/object-sink'
import { sha256 } from '@skippr/object-sink'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

export interface ObjectStoreHarness {
  /** Shown in the test names, e.g. `s3 (s3rver)`. */
  readonly name: string
  /** A store on the suite's destination; every case uses keys under its own prefix. */
  createStore(): Promise<ObjectStore>
  setup?(): Promise<void>
  cleanup?(): Promise<void>
}

const encoder = new TextEncoder()

function infoOf(body: readonly Uint8Array[], batch = 'p/e/000000000001/0'): ObjectInfo {
  return { sha256: sha256(body), contentType: 'application/x-ndjson', batch }
}

export function objectStoreSuite(harness: ObjectStoreHarness): void {
  describe(`${harness.name}: object store contract`, () => {
    const tag = randomBytes(4).toString('hex')
    let store: ObjectStore
    beforeAll(async () => {
      await harness.setup?.()
      store = await harness.createStore()
      await store.open(() => true)
    })
    afterAll(async () => {
      await store?.close()
      await harness.cleanup?.()
    })
    const key = (label: string) => `conf_${tag}/${label}`

    it('creates an object whole from its chunks, with its checksum, and reads it back byte for byte', async () => {
      const body = [encoder.encode('{"a":1}\n'), encoder.encode('{"a":2}\n'), new Uint8Array([0, 255, 10])]
      expect(await store.create(key('whole/x.jsonl'), body, infoOf(body))).toBe('created')
      expect(Buffer.from(await store.read(key('whole/x.jsonl')))).toEqual(Buffer.concat(body))
      expect(await store.stat(key('whole/x.jsonl'))).toEqual({ sha256: sha256(body), bytes: 19 })
    })

    it('an existing key is not replaced where the store creates once, and is rewritten where it cannot', async () => {
      const first = [encoder.encode('first\n')]
      const second = [encoder.encode('second, longer\n')]
      expect(await store.create(key('once/x'), first, infoOf(first))).toBe('created')
      const again = await store.create(key('once/x'), second, infoOf(second))
      expect(again).toBe(store.createsOnce ? 'exists' : 'created')
      const kept = store.createsOnce ? first : second
      expect(Buffer.from(await store.read(key('once/x')))).toEqual(Buffer.concat(kept))
      expect((await store.stat(key('once/x')))?.sha256).toBe(sha256(kept))
    })

    it('a missing key has no stat and an empty prefix lists nothing', async () => {
      expect(await store.stat(key('missing/x'))).toBeUndefined()
      expect(await store.list(key('missing/'))).toEqual([])
    })

    it('lists exactly the objects under a prefix, sorted, with keys as created', async () => {
      const names = ['b/2.jsonl', 'a/1.jsonl', 'a/10.jsonl', 'a %2F b/ünï €.csv']
      for (const name of names) {
        const body = [encoder.encode(`${name}\n`)]
        await store.create(key(`list/${name}`), body, infoOf(body))
      }
      const other = [encoder.encode('elsewhere\n')]
      await store.create(key('listed-not/x'), other, infoOf(other))
      expect(await store.list(key('list/'))).toEqual(names.map((n) => key(`list/${n}`)).sort())
      expect(await store.list(key('list/a/'))).toEqual([key('list/a/1.jsonl'), key('list/a/10.jsonl')])
    })

    it('an empty object is an object', async () => {
      const body: Uint8Array[] = []
      expect(await store.create(key('empty/x'), body, infoOf(body))).toBe('created')
      expect(await store.stat(key('empty/x'))).toEqual({ sha256: sha256(body), bytes: 0 })
    })
  })
}
