/** Turns the first validation issue in skippr.yml into one line: file, dotted path, problem, fix. */
import { ConfigError, configProblem } from '@skippr/connector-api'
import type { BaseIssue } from 'valibot'
import { fileSchema, pipelineSchema, skipprSectionSchema } from './schema.js'

export function issueToError(issue: BaseIssue<unknown> | undefined, file: string): ConfigError {
  if (!issue) return new ConfigError(`${file}: invalid configuration`)
  const { path, message, unknownKey } = configProblem(issue)
  const where = path.length > 0 ? `${file}: ${path.join('.')}` : file
  const guess = unknownKey === undefined ? undefined : closest(unknownKey, knownKeysAt(path))
  return new ConfigError(`${where}: ${message}${guess ? ` (did you mean ${guess}?)` : ''}`)
}

function knownKeysAt(path: readonly string[]): string[] {
  if (path.length === 0) return Object.keys(fileSchema.entries)
  if (path[0] === 'pipelines' && path.length === 2) return Object.keys(pipelineSchema.entries)
  if (path[0] === 'skippr' && path.length === 1) return Object.keys(skipprSectionSchema.entries)
  if (path[0] === 'skippr' && path[1] === 'store') return ['type', 'name']
  return []
}

/** The candidate within a small edit distance of `word`, for a "did you mean" hint. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const extended = candidates.find((c) => word.length >= 4 && c.startsWith(word))
  if (extended) return extended
  let best: string | undefined
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate)
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1)
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution)
    }
    previous = current
  }
  return previous[b.length] as number
}
