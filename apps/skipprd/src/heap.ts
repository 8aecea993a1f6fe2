/**
 * The CLI's memory policy for a sync. Its JavaScript heap is small and steady (about 15 MB live): the
 * data live in batch buffers outside the heap, and two things about those buffers decide peak RSS.
 *
 * The young generation. V8 doubles it (to 32 MB) when a full collection, forced by the buffers, finds
 * young objects surviving, and the added space then only holds garbage. Keeping it at the size
 * start-up gave it lowered a 1M-row sync's peak RSS by about 15 MB at no measured cost (e2e bench into
 * DuckDB, 10 runs each: median 272 against 286 MB, 0.94 against 0.93 s). Started with the flag, the
 * young generation would stay at 1 MB and cost about 5% of the sync's time in collections, hence set
 * once start-up is done. V8 reads the growth factor each time it would grow the young generation, so
 * setting it in a running process takes effect.
 *
 * Dead batch buffers. A batch's buffers outlive several young collections, so only a full collection
 * frees them, and V8 starts one for array buffers only once they grew 64 MB since the last (a fixed
 * limit, no flag changes it). Freed, their memory mostly stays in the C allocator, so RSS keeps the
 * high-water mark of live plus dead buffers. After each landed batch, `releaseDeadBuffers` asks for a
 * full collection when array buffers exceed the batches that may be live by DEAD_BUFFER_ALLOWANCE:
 * a collection every few batches instead of after each (each costs about 10 ms of the event loop).
 *
 * Only the CLI turns these on: the programmatic API runs inside someone else's process.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

const MiB = 1024 * 1024
const DEAD_BUFFER_ALLOWANCE = 32 * MiB

let collect: (() => void) | undefined

export function keepYoungGenerationSize(): void {
  setFlagsFromString('--semi-space-growth-factor=1')
}

/** Lets `releaseDeadBuffers` collect: V8 gives contexts made from now on a `gc` function. */
export function enableDeadBufferRelease(): void {
  setFlagsFromString('--expose-gc')
  collect = runInNewContext('gc') as () => void
}

/**
 * A full collection when array buffers exceed `liveBytes` (what may be live: the batches being
 * buffered and written) by more than DEAD_BUFFER_ALLOWANCE. Nothing unless the CLI enabled it.
 */
export function releaseDeadBuffers(liveBytes: number): void {
  if (collect && process.memoryUsage().arrayBuffers > liveBytes + DEAD_BUFFER_ALLOWANCE) collect()
}
