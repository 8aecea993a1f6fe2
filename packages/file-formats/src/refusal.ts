/**
 * Why a part's record cannot become a Parquet row, as a user reads it. A value the file cannot
 * hold refuses its row alone (a RecordRefusal naming the namespace, the field and the value: the
 * row's place is in the refusal, and in its deadletter); a record that is not well-formed is a
 * BadRecordError naming the row and part (both from 1), since the reading of the rest is a guess.
 */
import { BAD_RECORD, BadRecordError } from '@skippr/connector-api'
import type { PartReader } from './part-reader.js'
import type { RecordRefusal } from './records-refused.js'

/**
 * Thrown by a value parser: why the value cannot be held. Its message is the reason alone; the
 * scanner that called the parser knows the row and the field and adds them (see `refusal`).
 */
export class Refused extends Error {}

/** Enough of a value to recognise it, without a long JSON text filling the message. */
const SHOWN_CHARS = 100

/** The refusal of row `row` (from 1) for its value of field `field` (the part's field index) that was Refused. */
export function refusal(
  reader: PartReader,
  row: number,
  field: number,
  shown: string,
  reason: string,
): RecordRefusal {
  const name = reader.part.schema.fields[field]?.name
  return {
    part: reader.index,
    row: row - 1,
    error:
      `namespace ${reader.part.namespace}, field ${JSON.stringify(name)}: ${shown} ${reason}; ` +
      'the record does not match its schema, fix the source data',
    code: BAD_RECORD,
  }
}

/** The error for a record that is not well-formed, whatever its values: `what` completes the sentence. */
export function malformed(reader: PartReader, row: number, what: string): BadRecordError {
  return new BadRecordError(reader.part.namespace, `row ${row} of part ${reader.index + 1} ${what}`)
}

/** `text`, cut after SHOWN_CHARS characters. */
export function cut(text: string): string {
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text
}

/** A value for a message: quoted, control characters escaped, long ones cut. */
export function quoted(text: string): string {
  return JSON.stringify(cut(text))
}
