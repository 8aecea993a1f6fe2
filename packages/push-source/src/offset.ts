/**
 * A push source's offset: the `seq` of the last push its chunk holds, counted up across runs, and
 * the source's own state as of that push (HTTP: the recent Idempotency-Keys; Websocket: the last
 * frame of each sender). Committed with the rows, it is what a restarted source resumes from.
 */
import type { JsonValue, SourceOffset } from '@skippr/connector-api'

export interface PushOffset<State extends JsonValue = JsonValue> {
  readonly seq: number
  readonly state: State
}

/** The offset a run resumes from, or undefined for a first run; throws on an offset of another source. */
export function parsePushOffset<State extends JsonValue>(
  from: SourceOffset | undefined,
): PushOffset<State> | undefined {
  if (from === undefined || from === null) return undefined
  const offset = from as { seq?: unknown; state?: unknown }
  if (
    typeof from !== 'object' ||
    Array.isArray(from) ||
    typeof offset.seq !== 'number' ||
    !('state' in offset)
  )
    throw new Error(`the saved offset ${JSON.stringify(from)} is not a push source's ({seq, state})`)
  return from as unknown as PushOffset<State>
}
