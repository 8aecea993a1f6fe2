/**
 * Keeps credentials out of logs, events and error lines. Two kinds of secret: the values of
 * connectors' secret fields (registered when a connector is resolved) and passwords inside URLs
 * (`postgres://user:password@host`), which are recognised wherever they appear.
 */
const URL_PASSWORD = /([a-z][a-z0-9+.-]*:\/\/[^:/@\s"']*:)([^@\s"']+)(@)/gi
const MASK = '***'

export class Redactor {
  private readonly secrets = new Set<string>()

  /** Registers values to mask; very short values are ignored, they would mask ordinary text. */
  add(values: Iterable<string>): void {
    for (const value of values) {
      if (value.length < 4) continue
      this.secrets.add(value)
      // Logs are JSON: a secret with quotes or backslashes appears escaped there.
      this.secrets.add(JSON.stringify(value).slice(1, -1))
      for (const password of urlPasswords(value)) this.add([password, decodeURIComponentSafe(password)])
    }
  }

  redact(text: string): string {
    let out = text.replace(URL_PASSWORD, `$1${MASK}$3`)
    for (const secret of this.secrets) if (out.includes(secret)) out = out.replaceAll(secret, MASK)
    return out
  }
}

function urlPasswords(value: string): string[] {
  return [...value.matchAll(URL_PASSWORD)].map((m) => m[2] as string)
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}
