/**
 * What the server's version decides. From 22.2 on, an insert can name its own deduplication key
 * (`insert_deduplication_token`); the sink then passes the part key, so that a retried part is
 * recognised even if the server formed its block differently. 18.16, the server the tests run,
 * has no such setting: there only the test of this decision runs, not the setting itself.
 */

const FIRST_WITH_TOKEN = [22, 2] as const

export function supportsDeduplicationToken(version: readonly number[]): boolean {
  const [major = 0, minor = 0] = version
  return major > FIRST_WITH_TOKEN[0] || (major === FIRST_WITH_TOKEN[0] && minor >= FIRST_WITH_TOKEN[1])
}
