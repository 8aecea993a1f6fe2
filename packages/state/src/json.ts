/** JSON-serialisable data: offsets and schemas are stored as such, opaque to this package. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | readonly JsonValue[]
  | { readonly [k: string]: JsonValue }

/** JSON text with object keys sorted, so two values that differ only in key order compare equal. */
export function canonicalJson(value: JsonValue): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v
    const sorted: Record<string, unknown> = {}
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k]
    return sorted
  })
}
