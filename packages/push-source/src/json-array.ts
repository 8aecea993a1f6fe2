/**
 * The [start, end) byte ranges of the elements of a JSON array that JSON.parse accepted: its
 * top-level commas, found outside strings and nested values. Each element's bytes are kept as the
 * sender wrote them (a number JSON.parse would round lands as written).
 */
const QUOTE = 34
const COMMA = 44
const OPEN_BRACKET = 91
const BACKSLASH = 92
const CLOSE_BRACKET = 93
const OPEN_BRACE = 123
const CLOSE_BRACE = 125

export function jsonArrayElements(array: Uint8Array): [number, number][] {
  const elements: [number, number][] = []
  let depth = 0
  let start = 1
  for (let i = 0; i < array.length; i++) {
    const c = array[i]
    if (c === QUOTE) {
      i++
      while (array[i] !== QUOTE) i += array[i] === BACKSLASH ? 2 : 1
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--
      if (depth === 0) push(elements, array, start, i)
    } else if (c === COMMA && depth === 1) {
      push(elements, array, start, i)
      start = i + 1
    }
  }
  return elements
}

/** An element without the whitespace around it; `[]` has none. */
function push(elements: [number, number][], array: Uint8Array, from: number, to: number): void {
  let start = from
  let end = to
  while (start < end && array[start]! <= 32) start++
  while (end > start && array[end - 1]! <= 32) end--
  if (end > start) elements.push([start, end])
}
