/** Reconnect delays: exponential from `initialMs`, capped at `maxMs`, with jitter so a fleet does not reconnect in step. */
export interface BackoffPolicy {
  initialMs: number
  maxMs: number
}

/**
 * Delay before reconnect attempt `attempt` (1-based): the capped exponential `initial·2^(attempt-1)`,
 * then a uniformly random value in its upper half ("equal jitter"), so it never collapses to zero.
 */
export function backoffDelay(
  policy: BackoffPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30)
  const capped = Math.min(policy.maxMs, policy.initialMs * 2 ** exponent)
  return Math.round(capped / 2 + random() * (capped / 2))
}
