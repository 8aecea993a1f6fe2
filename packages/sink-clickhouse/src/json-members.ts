/**
 * The members of one JSON object, each value as its source text. `JSON.parse` would turn a long
 * past 2^53 into a rounded number and re-serialise nested JSON, so values are cut out of the line
 * as written instead. The caller has already checked that the line is a JSON object, so this only
 * has to find where each value ends.
 */

const WHITESPACE = /\s/

/** Key → the value's text (`"a\n"`, `12345678901234567890`, `{"x": [1]}`, `null`); a repeated key keeps its last value. */
export function jsonMembers(line: string): Map<string, string> {
  const members = new Map<string, string>()
  let i = skipSpace(line, line.indexOf('{') + 1)
  while (line[i] === '"') {
    const keyEnd = stringEnd(line, i)
    const key = JSON.parse(line.slice(i, keyEnd)) as string
    const start = skipSpace(line, line.indexOf(':', keyEnd) + 1)
    const end = valueEnd(line, start)
    members.set(key, line.slice(start, end))
    i = skipSpace(line, end)
    if (line[i] === ',') i = skipSpace(line, i + 1)
  }
  return members
}

function skipSpace(text: string, from: number): number {
  let i = from
  while (i < text.length && WHITESPACE.test(text[i] as string)) i++
  return i
}

/** The index after the closing quote of the string starting at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1
  while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1
  return i + 1
}

function valueEnd(text: string, start: number): number {
  const first = text[start]
  if (first === '"') return stringEnd(text, start)
  if (first !== '{' && first !== '[') {
    let i = start
    while (i < text.length && !',}]'.includes(text[i] as string) && !WHITESPACE.test(text[i] as string)) i++
    return i
  }
  let depth = 0
  let i = start
  do {
    const c = text[i]
    if (c === '"') {
      i = stringEnd(text, i)
      continue
    }
    if (c === '{' || c === '[') depth++
    else if (c === '}' || c === ']') depth--
    i++
  } while (depth > 0)
  return i
}
