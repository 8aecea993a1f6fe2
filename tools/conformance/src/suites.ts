/**
 * One suite per guarantee tier. Each defines a vitest `describe` block; a sink package calls the
 * suite of its tier from a test file with a harness for its real destination.
 */
import type { SinkDefinition } from '@skippr/connector-api'
import { describe, expect, it } from 'vitest'
import { atLeastOnceCases } from './at-least-once.js'
import type { SinkHarness } from './harness.js'
import { landingCases } from './landing.js'
import { renameCases } from './rename.js'
import { retryCases } from './retry.js'
import { useSession } from './session.js'
import { transactionalCases } from './transactional.js'

/** What any sink that stores rows must do: formats, awkward values, identifiers, evolution. */
export function landingSuite(harness: SinkHarness): void {
  describe(`${harness.name}: landing conformance`, () => {
    landingCases(useSession(harness))
  })
}

/** `exactly-once`: a repeated identity is `already-landed`; fences and rejections leave nothing. */
export function exactlyOnceSuite(harness: SinkHarness): void {
  describe(`${harness.name}: exactly-once conformance`, () => {
    const session = useSession(harness)
    landingCases(session)
    retryCases(session, { repeatStatus: ['already-landed'] })
    transactionalCases(session)
  })
}

/** For a sink that declares `renamesColumns`: a renamed field's column is renamed, its rows kept. */
export function renameColumnSuite(definition: SinkDefinition, harness: SinkHarness): void {
  describe(`${harness.name}: column rename conformance`, () => {
    it('declares renamesColumns, so skipprd tells users a rename reaches this destination', () => {
      expect(definition.renamesColumns).toBe(true)
    })
    renameCases(useSession(harness))
  })
}

/** `overwrite-on-retry`: a repeated identity rewrites the same output, so rows appear once. */
export function overwriteOnRetrySuite(harness: SinkHarness): void {
  describe(`${harness.name}: overwrite-on-retry conformance`, () => {
    const session = useSession(harness)
    landingCases(session)
    retryCases(session, { repeatStatus: ['landed', 'already-landed'] })
  })
}

/**
 * `at-least-once`: a retry may land a batch again, only as whole parts, each row tagged with its
 * part key (`BATCH_COLUMN`) so the copies can be removed. The harness's `readRows` returns the key.
 */
export function atLeastOnceSuite(harness: SinkHarness): void {
  describe(`${harness.name}: at-least-once conformance`, () => {
    const session = useSession(harness)
    landingCases(session)
    atLeastOnceCases(session)
  })
}
