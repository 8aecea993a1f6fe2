/**
 * Turns the log's frames, read in FSN order, back into whole batches. A batch is yielded only when its
 * batch frame is read; data frames that no batch frame completes (a commit cut short by a crash or an
 * I/O error) are dropped, so a reader never sees part of a batch.
 */
import { WalCorruptError } from './errors.js'
import { decodeFrame, splitParts } from './frame.js'
import type { WalBatch } from './types.js'

interface Run {
  readonly firstFsn: bigint
  readonly bodies: Uint8Array[]
}

export class BatchAssembler {
  private run: Run | undefined

  constructor(
    private readonly pipeline: string,
    private readonly where: (fsn: bigint) => string,
  ) {}

  /** Feeds the next frame; returns the batch it completes, if any. */
  push(fsn: bigint, payload: Uint8Array): WalBatch | undefined {
    const frame = decodeFrame(payload, this.where(fsn))
    if (frame.kind === 'data') {
      if (frame.index === 0) this.run = { firstFsn: fsn, bodies: [frame.body] }
      else if (this.continues(fsn, frame.index)) this.run!.bodies.push(frame.body)
      else throw new WalCorruptError(this.where(fsn), `data frame ${frame.index} does not follow its batch`)
      return undefined
    }
    const run = this.run
    this.run = undefined
    let body = frame.tail
    if (frame.frames > 1) {
      if (run === undefined || !this.completes(run, fsn, frame.frames)) {
        throw new WalCorruptError(
          this.where(fsn),
          `batch frame of ${frame.frames} frames lacks its data frames`,
        )
      }
      body = Buffer.concat([...run.bodies, frame.tail])
    }
    return {
      id: { pipeline: this.pipeline, epoch: frame.epoch, seq: fsn },
      ...(frame.committedAt === undefined ? {} : { committedAt: frame.committedAt }),
      offset: frame.offset,
      parts: splitParts(frame.parts, body, this.where(fsn)),
    }
  }

  private continues(fsn: bigint, index: number): boolean {
    const run = this.run
    return run !== undefined && run.bodies.length === index && run.firstFsn + BigInt(index) === fsn
  }

  private completes(run: Run, fsn: bigint, frames: number): boolean {
    return run.bodies.length === frames - 1 && run.firstFsn + BigInt(frames - 1) === fsn
  }
}
