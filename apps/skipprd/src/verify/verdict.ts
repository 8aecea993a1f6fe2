/**
 * A namespace's verdict: every row the source holds is in exactly one of destination, pending or
 * deadlettered, so it matches when `source = destination + pending + deadlettered` and the
 * destination repeats no key. Either failing is a mismatch; without both counts it is unchecked,
 * unless duplicates alone already tell.
 */

export type Verdict = 'ok' | 'mismatch' | 'unchecked'

/** What was counted; undefined where the connector cannot count, or there is no key to look by. */
export interface Counted {
  readonly namespace: string
  readonly sourceRows: number | undefined
  readonly destinationRows: number | undefined
  readonly duplicates: number | undefined
  readonly pendingRows: number
  readonly deadletterRows: number
}

export interface NamespaceTally extends Counted {
  readonly verdict: Verdict
  /** The comparison, in words. */
  readonly reason: string
}

/** `key`: the namespace's primary key, which duplicates are looked for by (empty: none). */
export function judge(counted: Counted, key: readonly string[]): NamespaceTally {
  const { sourceRows, destinationRows, duplicates } = counted
  const copies =
    duplicates !== undefined && duplicates > 0
      ? `${duplicates} duplicate row(s) in the destination (same ${key.join(', ')})`
      : undefined
  if (sourceRows === undefined || destinationRows === undefined) {
    const what = sourceRows === undefined ? 'the source' : 'the destination'
    return copies
      ? { ...counted, verdict: 'mismatch', reason: copies }
      : { ...counted, verdict: 'unchecked', reason: `${what} cannot count its rows` }
  }
  const { balanced, text } = balance(counted, sourceRows, destinationRows)
  if (copies) return { ...counted, verdict: 'mismatch', reason: `${text}; ${copies}` }
  const noKey = key.length === 0 ? '; no primary key to look for duplicates by' : ''
  return { ...counted, verdict: balanced ? 'ok' : 'mismatch', reason: `${text}${noKey}` }
}

function balance(counted: Counted, source: number, destination: number): { balanced: boolean; text: string } {
  const accounted = destination + counted.pendingRows + counted.deadletterRows
  const sum = `destination ${destination} + pending ${counted.pendingRows} + deadlettered ${counted.deadletterRows}`
  if (source === accounted) return { balanced: true, text: `source ${source} = ${sum}` }
  const off = accounted > source ? `${accounted - source} more` : `${source - accounted} fewer`
  return { balanced: false, text: `source ${source} ≠ ${sum} (${off} than the source holds)` }
}
