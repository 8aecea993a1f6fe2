/**
 * A part's rows, decoded from its body into a RowSink: the body is read once, as UTF-8 text,
 * and scanned as the CSV or JSON lines its format says.
 */
import { BadRecordError, type Field } from '@skippr/connector-api'
import { decodeCsv } from './csv-records.js'
import { decodeJsonl } from './jsonl-records.js'
import { type FilePart, type PartReader, partReader, type RowSink } from './part-reader.js'

/**
 * Puts the rows of `part`, the `index`th of the parts, into `out` by `header` column; returns how
 * many there were, refused ones included. A value the file cannot hold exactly refuses its row
 * (`out.refuseRow`); a record that is not well-formed, or a body that is not UTF-8, throws
 * BadRecordError.
 */
export function decodePart(part: FilePart, index: number, header: readonly Field[], out: RowSink): number {
  return decodeWith(partReader(part, index, header), out)
}

/** Puts the rows of `reader`'s part into `out` as `reader` places and reads their values; returns how many there were. */
export function decodeWith(reader: PartReader, out: RowSink): number {
  const text = partText(reader.part, reader.index)
  return reader.part.format === 'csv' ? decodeCsv(text, reader, out) : decodeJsonl(text, reader, out)
}

/** Fatal, so bytes that are not UTF-8 throw instead of becoming U+FFFD in the file. */
const fatalUtf8 = () => new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const utf8 = fatalUtf8()

/** The part's body as text; bytes that are not UTF-8 cannot be a Parquet string or a path, and are refused. */
function partText(part: FilePart, index: number): string {
  try {
    return utf8.decode(part.body)
  } catch {
    const at = firstInvalidByte(part.body)
    throw new BadRecordError(
      part.namespace,
      `part ${index + 1} holds bytes that are not UTF-8 (at byte ${at} of its body), which its records cannot be read from`,
    )
  }
}

/** The offset of the byte at which `bytes` stops being UTF-8: a streaming decoder throws only there. */
function firstInvalidByte(bytes: Uint8Array): number {
  let valid = 0
  let invalid = bytes.length
  while (invalid - valid > 1) {
    const middle = (valid + invalid) >>> 1
    try {
      fatalUtf8().decode(bytes.subarray(0, middle), { stream: true })
      valid = middle
    } catch {
      invalid = middle
    }
  }
  return valid
}
