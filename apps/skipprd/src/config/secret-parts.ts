/**
 * What to mask of a secret field's value. A connection URL's secrets are its password and its
 * query (whole and each `key=value`, which may carry keys); the scheme, user, host, port and path
 * are what messages show of it (`describeTarget`), so registering the whole URL would mask the
 * address too: "cannot reach PostgreSQL at ***" whenever the URL has no password. Any other value
 * is secret whole.
 */
export function secretParts(value: string): string[] {
  const url = parseUrl(value)
  if (url === undefined) return [value]
  const parts = [url.password, safeDecode(url.password), url.search.slice(1)]
  for (const pair of url.search.slice(1).split('&')) parts.push(pair)
  return [...new Set(parts.filter((part) => part.length > 0))]
}

/** A URL with a scheme and an authority (`scheme://…`); `mailto:x` and plain words are not. */
function parseUrl(value: string): URL | undefined {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return undefined
  try {
    return new URL(value)
  } catch {
    return undefined
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}
