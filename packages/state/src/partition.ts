/*
 * How a state key splits for a store that partitions its items (DynamoDB: a partition key and a
 * sort key). A partition is one pipeline of one workspace, so a pipeline's lease and records are
 * read and listed together, and every `list()` the state package makes stays inside one partition
 * (a Query, never a Scan):
 *
 *   <ws>/leases/<pipeline>             → partition <ws>#<pipeline>, sort `lease`
 *   <ws>/pipelines/<pipeline>/<rest>   → partition <ws>#<pipeline>, sort `state/<rest>`
 *
 * Segments are URI-encoded (keys.ts), so `#` never occurs inside one and the split is reversible.
 */

export interface KeyParts {
  readonly partition: string
  readonly sort: string
}

const LEASE_SORT = 'lease'
const STATE_SORT = 'state/'

/** Also splits a `list()` prefix, which names one pipeline's records: its sort part is a prefix. */
export function splitStateKey(key: string): KeyParts {
  const [workspace, kind, pipeline, ...rest] = key.split('/')
  if (workspace && pipeline && kind === 'leases' && rest.length === 0) {
    return { partition: `${workspace}#${pipeline}`, sort: LEASE_SORT }
  }
  if (workspace && pipeline && kind === 'pipelines' && rest.length > 0) {
    return { partition: `${workspace}#${pipeline}`, sort: `${STATE_SORT}${rest.join('/')}` }
  }
  throw new Error(`state key outside the state key layout: ${key}`)
}

export function joinStateKey(parts: KeyParts): string {
  const [workspace, pipeline, extra] = parts.partition.split('#')
  if (!workspace || !pipeline || extra !== undefined) {
    throw new Error(`state partition outside the state key layout: ${parts.partition}`)
  }
  if (parts.sort === LEASE_SORT) return `${workspace}/leases/${pipeline}`
  if (parts.sort.startsWith(STATE_SORT)) {
    return `${workspace}/pipelines/${pipeline}/${parts.sort.slice(STATE_SORT.length)}`
  }
  throw new Error(`state sort key outside the state key layout: ${parts.sort}`)
}
