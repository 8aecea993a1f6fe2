/**
 * Runs a round-trip property with fast-check and fails with a short report: the seed to replay,
 * the differences found, and the start of the counterexample. Shrinking re-runs a whole sync per
 * step, so it is off unless SKIPPR_FIDELITY_SHRINK is set.
 */
import fc from 'fast-check'

/** Runs per property; raise it for a long run by hand. */
export const RUNS = Number(process.env.SKIPPR_FIDELITY_RUNS ?? 5)

export class RoundTripError extends Error {}

export async function assertRoundTrips<T>(
  arbitrary: fc.Arbitrary<T>,
  roundTrip: (value: T) => Promise<readonly string[]>,
  numRuns = RUNS,
): Promise<void> {
  const seed = process.env.SKIPPR_FIDELITY_SEED
  const details = await fc.check(
    fc.asyncProperty(arbitrary, async (value) => {
      const problems = await roundTrip(value)
      if (problems.length > 0) throw new RoundTripError(problems.join('\n'))
    }),
    { numRuns, endOnFailure: !process.env.SKIPPR_FIDELITY_SHRINK, ...(seed ? { seed: Number(seed) } : {}) },
  )
  if (!details.failed) return
  const cause = details.errorInstance
  const problems = cause instanceof Error ? cause.message : String(cause)
  const example = fc.stringify(details.counterexample).slice(0, 1500)
  throw new Error(
    `failed after ${details.numRuns} run(s); replay with SKIPPR_FIDELITY_SEED=${details.seed}\n` +
      `${problems}\ncounterexample (start): ${example}`,
  )
}
