/** Deterministic test batches: batch `k` always has the same parts and bytes, some larger than a WAL file. */
import { createHash } from 'node:crypto'
import { encodeBatchFrames } from '../../src/frame.js'
import type { BatchInput, BatchPart, Offset } from '../../src/index.js'

/** A batch with whole-buffer bodies: what makeBatch builds and pending() returns. */
export interface TestBatch {
  readonly offset: Offset | undefined
  readonly parts: readonly BatchPart[]
}

export const SMALL_FILE_BYTES = 64 * 1024

function rng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Batch k: 0–3 parts; about one batch in four spans several 64 KiB WAL files. */
export function makeBatch(k: number): TestBatch {
  const rand = rng(k * 7919 + 1)
  const large = rand() < 0.25
  const parts: BatchPart[] = []
  const count = Math.floor(rand() * 4)
  for (let i = 0; i < count; i++) {
    const bytes = large ? 40_000 + Math.floor(rand() * 160_000) : Math.floor(rand() * 4000)
    parts.push(part(`ns${i}`, rand() < 0.5 ? 'csv' : 'jsonl', bytes, rand))
  }
  return { offset: { k }, parts }
}

function part(namespace: string, format: 'csv' | 'jsonl', bytes: number, rand: () => number): BatchPart {
  const body = Buffer.allocUnsafe(bytes)
  let rows = 0
  for (let i = 0; i < bytes; i++) {
    const newline = i === bytes - 1 || rand() < 0.02
    body[i] = newline ? 10 : 97 + Math.floor(rand() * 26)
    if (newline) rows++
  }
  return { namespace, schemaVersion: 1 + Math.floor(rand() * 3), format, rows, body }
}

/** The k of a test batch's offset. */
export function offsetK(offset: unknown): number {
  return offset === undefined ? 0 : (offset as { k: number }).k
}

/** The batch with each body as length + SHA-256, for comparisons (a deep compare of big Buffers is slow). */
export function digested(b: TestBatch) {
  return {
    offset: b.offset,
    parts: b.parts.map((p) => ({
      ...p,
      body: `${p.body.length}:${createHash('sha256').update(p.body).digest('hex')}`,
    })),
  }
}

/** The commit time test frames carry: 2026-01-01T00:00:00Z. */
export const COMMITTED_AT = Date.UTC(2026, 0, 1)

/** A batch's WAL frames, each joined into one buffer as the slot stores it. */
export function encodeFrames(epoch: string, batch: BatchInput, maxFrameBytes: number): Buffer[] {
  return [...encodeBatchFrames(epoch, batch, maxFrameBytes, COMMITTED_AT)].map((pieces) =>
    Buffer.concat(pieces),
  )
}
