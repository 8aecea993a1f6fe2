/**
 * Names taken from source data (namespaces, pipelines) made safe as one file name or one segment
 * of an object key: the characters that are unsafe in a file name on some system, `%`, and a
 * leading dot are percent-encoded, so distinct names stay distinct and nothing escapes the output
 * directory or adds a key level.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it matches
const UNSAFE = /[\u0000-\u001f\u007f/\\:*?"<>|%]|^\./g

export function safeName(name: string): string {
  return name.replace(UNSAFE, (ch) =>
    [...new TextEncoder().encode(ch)]
      .map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`)
      .join(''),
  )
}
