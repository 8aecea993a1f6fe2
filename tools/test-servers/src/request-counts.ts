/** Round trips by kind, as the fakes count them for tests and benches. */

/** Each kind and how often it occurs. */
export function countKinds(kinds: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const kind of kinds) counts[kind] = (counts[kind] ?? 0) + 1
  return counts
}

/** The requests counted in `after` and not in `before` (two snapshots of one fake's counts), by kind. */
export function countsSince(
  before: Readonly<Record<string, number>>,
  after: Readonly<Record<string, number>>,
): Record<string, number> {
  const since: Record<string, number> = {}
  for (const [kind, n] of Object.entries(after)) {
    const more = n - (before[kind] ?? 0)
    if (more > 0) since[kind] = more
  }
  return since
}
