/**
 * The S3 WAL's record: one small JSON value kept beside the log in a store with compare-and-set
 * (the state store), never in the bucket. It says which objects are the log, how far the log is
 * acked, the WAL's metadata, and which writer may add frames. Every change is one conditional
 * write on the record's version, and that write is where a new writer fences out an old one.
 */
import type { WalMeta } from '@skippr/wal'

/** A compare-and-set cell for one pipeline's record (the state store's `wal` key). */
export interface LogRecordStore {
  read(): Promise<{ readonly value: unknown; readonly version: number } | undefined>
  /** Writes when the record is still at `expectedVersion` (undefined: absent); false otherwise. */
  write(value: unknown, expectedVersion: number | undefined): Promise<boolean>
}

/** The FSNs one writer published: from `firstFsn`, to `lastFsn` once a later writer closed it. */
export interface WriterRange {
  readonly id: string
  readonly firstFsn: bigint
  readonly lastFsn?: bigint
}

export interface LogRecord {
  /** Changes when the log is cleared: objects of an earlier log are never read as this one's. */
  readonly log: string
  readonly ackedFsn: bigint
  readonly meta: WalMeta | undefined
  /** In the order they opened the log; only the last may publish, and the others end at `lastFsn`. */
  readonly writers: readonly WriterRange[]
}

export interface StoredRecord {
  readonly record: LogRecord
  readonly version: number
}

type RecordJson = {
  readonly version: 1
  readonly log: string
  readonly acked: string
  readonly meta: WalMeta | null
  readonly writers: readonly { readonly id: string; readonly first: string; readonly last?: string }[]
}

export function encodeRecord(record: LogRecord): RecordJson {
  return {
    version: 1,
    log: record.log,
    acked: record.ackedFsn.toString(),
    meta: record.meta ?? null,
    writers: record.writers.map((w) => ({
      id: w.id,
      first: w.firstFsn.toString(),
      ...(w.lastFsn !== undefined && { last: w.lastFsn.toString() }),
    })),
  }
}

/** The record in a stored value; undefined when it is not one this version wrote. */
export function decodeRecord(value: unknown): LogRecord | undefined {
  const json = value as Partial<RecordJson> | null
  if (json?.version !== 1 || typeof json.log !== 'string' || typeof json.acked !== 'string') return undefined
  if (!Array.isArray(json.writers)) return undefined
  return {
    log: json.log,
    ackedFsn: BigInt(json.acked),
    meta: json.meta ?? undefined,
    writers: json.writers.map((w) => ({
      id: w.id,
      firstFsn: BigInt(w.first),
      ...(w.last !== undefined && { lastFsn: BigInt(w.last) }),
    })),
  }
}

/** The writer whose range holds `fsn`; undefined when no writer published it. */
export function writerOf(record: LogRecord, fsn: bigint): WriterRange | undefined {
  for (let i = record.writers.length - 1; i >= 0; i--) {
    const writer = record.writers[i] as WriterRange
    if (fsn >= writer.firstFsn)
      return writer.lastFsn === undefined || fsn <= writer.lastFsn ? writer : undefined
  }
  return undefined
}

/** Closed writers whose frames are all acked say nothing any more: the record keeps the others. */
export function compactWriters(writers: readonly WriterRange[], ackedFsn: bigint): WriterRange[] {
  return writers.filter((w, i) => i === writers.length - 1 || (w.lastFsn ?? ackedFsn + 1n) > ackedFsn)
}
