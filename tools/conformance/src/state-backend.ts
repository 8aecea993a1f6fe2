/**
 * The contract every `StateBackend` (@skippr/state) keeps, run against each store on its real
 * server: single-key reads that see every completed write, conditional puts that exactly one of
 * several racing writers wins, deletes, and lists by prefix in key order. Keys follow the state
 * key layout (one pipeline's records per list), as the state package makes them.
 */
import { randomBytes } from 'node:crypto'
import type { StateBackend } from '@skippr/state'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

export interface StateBackendHarness {
  /** Shown in the test names, e.g. `dynamodb (dynalite)`. */
  readonly name: string
  /** A backend on the suite's store; each case uses its own workspace, so one store serves all. */
  open(): Promise<StateBackend>
  setup?(): Promise<void>
  cleanup?(): Promise<void>
}

export function stateBackendSuite(harness: StateBackendHarness): void {
  describe(`${harness.name}: state backend contract`, () => {
    const opened: StateBackend[] = []
    let workspaces = 0
    beforeAll(async () => harness.setup?.())
    afterAll(async () => {
      await Promise.all(opened.splice(0).map((backend) => backend.close()))
      await harness.cleanup?.()
    })

    /** A fresh backend and a workspace no other case (or earlier run) has written to. */
    async function fresh(): Promise<{ backend: StateBackend; ws: string }> {
      const backend = await harness.open()
      opened.push(backend)
      workspaces += 1
      return { backend, ws: `w${workspaces}-${randomBytes(4).toString('hex')}` }
    }

    it('gets what was put, with a version that changes on every write', async () => {
      const { backend, ws } = await fresh()
      const key = `${ws}/pipelines/p/resume`
      expect(await backend.get(key)).toBeUndefined()
      const first = await backend.put(key, { n: 1 })
      const second = await backend.put(key, { n: 2 })
      if (!first.ok || !second.ok) throw new Error('an unconditional put was refused')
      const entry = await backend.get(key)
      expect(entry).toEqual({ value: { n: 2 }, version: second.version })
      expect(second.version).not.toBe(first.version)
    })

    it('puts with mustNotExist only when the key is absent, and reports what it found', async () => {
      const { backend, ws } = await fresh()
      const key = `${ws}/leases/p`
      expect((await backend.put(key, 'first', { mustNotExist: true })).ok).toBe(true)
      const refused = await backend.put(key, 'second', { mustNotExist: true })
      expect(refused).toMatchObject({ ok: false, current: { value: 'first' } })
      expect((await backend.get(key))?.value).toBe('first')
    })

    it('puts with expectedVersion only when the version matches', async () => {
      const { backend, ws } = await fresh()
      const key = `${ws}/pipelines/p/enabled`
      const created = await backend.put(key, 1)
      if (!created.ok) throw new Error('an unconditional put was refused')
      expect((await backend.put(key, 2, { expectedVersion: created.version })).ok).toBe(true)
      const stale = await backend.put(key, 3, { expectedVersion: created.version })
      expect(stale).toMatchObject({ ok: false, current: { value: 2 } })
      const absent = await backend.put(`${ws}/pipelines/p/last-run`, 1, { expectedVersion: created.version })
      expect(absent).toEqual({ ok: false, current: undefined })
    })

    it('lets exactly one of racing conditional puts win', async () => {
      const { backend, ws } = await fresh()
      const key = `${ws}/leases/p`
      const created = await backend.put(key, { token: '1' })
      if (!created.ok) throw new Error('an unconditional put was refused')
      const racers = Array.from({ length: 8 }, (_, i) =>
        backend.put(key, { token: '2', owner: i }, { expectedVersion: created.version }),
      )
      const results = await Promise.all(racers)
      const winners = results.flatMap((result, owner) => (result.ok ? [owner] : []))
      expect(winners).toHaveLength(1)
      expect((await backend.get(key))?.value).toEqual({ token: '2', owner: winners[0] })
      const creators = Array.from({ length: 8 }, (_, i) =>
        backend.put(`${ws}/leases/q`, i, { mustNotExist: true }),
      )
      expect((await Promise.all(creators)).filter((result) => result.ok)).toHaveLength(1)
    })

    it('deletes, saying whether the key existed', async () => {
      const { backend, ws } = await fresh()
      const key = `${ws}/pipelines/p/counters`
      await backend.put(key, true)
      expect(await backend.delete(key)).toBe(true)
      expect(await backend.delete(key)).toBe(false)
      expect(await backend.get(key)).toBeUndefined()
    })

    it("lists exactly one pipeline's keys with a prefix, in key order", async () => {
      const { backend, ws } = await fresh()
      const keys = [
        `${ws}/pipelines/p/schema/b/0000000001`,
        `${ws}/pipelines/p/schema/a/0000000002`,
        `${ws}/pipelines/p/schema/a/0000000001`,
        `${ws}/pipelines/p/resume`,
        `${ws}/pipelines/p2/schema/a/0000000001`,
        `${ws}/pipelines/o/schema/a/0000000001`,
        `${ws}/leases/p`,
      ]
      for (const key of keys) await backend.put(key, key)
      const schemas = await backend.list(`${ws}/pipelines/p/schema/`)
      expect(schemas.map((item) => item.key)).toEqual([
        `${ws}/pipelines/p/schema/a/0000000001`,
        `${ws}/pipelines/p/schema/a/0000000002`,
        `${ws}/pipelines/p/schema/b/0000000001`,
      ])
      expect(schemas.map((item) => item.value)).toEqual(schemas.map((item) => item.key))
      const pipeline = await backend.list(`${ws}/pipelines/p/`)
      expect(pipeline.map((item) => item.key)).toEqual([
        `${ws}/pipelines/p/resume`,
        ...schemas.map((i) => i.key),
      ])
      expect(await backend.list(`${ws}/pipelines/none/`)).toEqual([])
    })

    it('lists more keys than one page of a paged service holds', async () => {
      const { backend, ws } = await fresh()
      // About 1.3 MB of values: DynamoDB's Query returns at most 1 MB per page.
      const value = 'x'.repeat(20_000)
      const keys = Array.from(
        { length: 64 },
        (_, i) => `${ws}/pipelines/p/schema/n/${String(i).padStart(10, '0')}`,
      )
      await Promise.all(keys.map((key) => backend.put(key, value)))
      const listed = await backend.list(`${ws}/pipelines/p/schema/`)
      expect(listed.map((item) => item.key)).toEqual(keys)
    })

    it('round-trips JSON values unchanged, and names that needed escaping', async () => {
      const { backend, ws } = await fresh()
      const value = {
        s: 'é\u0000"\n',
        n: -1.5e300,
        i: 2 ** 53 - 1,
        b: false,
        z: null,
        a: [1, [2, {}]],
        o: { '': 'x' },
      }
      const key = `${ws}/pipelines/${encodeURIComponent('a/b#é c')}/resume`
      await backend.put(key, value)
      expect(await backend.get(key)).toMatchObject({ value })
      expect(
        (await backend.list(`${ws}/pipelines/${encodeURIComponent('a/b#é c')}/`)).map((i) => i.key),
      ).toEqual([key])
    })

    it('sees a write made through another open backend at once', async () => {
      const { backend, ws } = await fresh()
      const other = await harness.open()
      opened.push(other)
      const key = `${ws}/pipelines/p/resume`
      for (let n = 1; n <= 5; n++) {
        await backend.put(key, n)
        expect((await other.get(key))?.value).toBe(n)
      }
    })
  })
}
