/**
 * Where a connection string points, without its password or query parameters: safe for messages
 * and logs. Keyword/value strings (`host=... password=...`) are not echoed at all.
 */
export function describeTarget(connectionString: string): string {
  try {
    const url = new URL(connectionString)
    const user = url.username ? `${decodeURIComponent(url.username)}@` : ''
    return `${url.protocol}//${user}${url.host}${url.pathname}`
  } catch {
    return 'the configured server'
  }
}
