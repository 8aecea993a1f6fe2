/**
 * Counter-based randomness: a row's random words are a hash of (seed, row index) and nothing
 * else, so any row range can be produced without producing the rows before it. That is what makes
 * a run resumed at any offset byte-identical to an uninterrupted one.
 */

/** MurmurHash3's 32-bit finaliser: every input bit affects every output bit. */
export function mix32(x: number): number {
  let h = x >>> 0
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

const GOLDEN = 0x9e3779b9

/** The key a seed contributes to every row's hash. */
export function seedKey(seed: number): number {
  return mix32(mix32(seed ^ GOLDEN) + Math.floor(seed / 4294967296))
}

/** The first random word of row `index` (below 2^32); `nextWord` derives the row's others. */
export function rowWord(key: number, index: number): number {
  return mix32((key ^ index) + GOLDEN)
}

export function nextWord(word: number): number {
  return mix32(word + GOLDEN)
}

/** A word as a uniform float in [0, 1). */
export function unit(word: number): number {
  return word / 4294967296
}
