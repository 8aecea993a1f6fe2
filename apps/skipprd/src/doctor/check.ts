/** One line of `skipprd doctor`'s report, in the vendor's shape: `{ name, ok, message }`. */
export interface Check {
  readonly name: string
  readonly ok: boolean
  readonly message: string
}

export function passed(name: string, message: string): Check {
  return { name, ok: true, message }
}

export function failed(name: string, message: string): Check {
  return { name, ok: false, message }
}

/** A failure's one line: its message, whatever was thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** `[ok] config: …` / `[FAIL] env: …`, one line per check. */
export function textReport(checks: readonly Check[]): string {
  return checks.map((check) => `[${check.ok ? 'ok' : 'FAIL'}] ${check.name}: ${check.message}\n`).join('')
}

/** `{"ok":…,"checks":[…]}` on one line. */
export function jsonReport(checks: readonly Check[]): string {
  return `${JSON.stringify({ ok: checks.every((check) => check.ok), checks })}\n`
}
