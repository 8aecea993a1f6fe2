/**
 * Object names: `<prefix>wal/<workspace>/<pipeline>/<log>/<writer>/<fsn>`, the FSN zero-padded to
 * 20 digits so that listing order is FSN order. The pipeline name is encoded as the disk WAL
 * encodes it (`slotName`), so any name is one path segment.
 */
import { slotName } from '@skippr/wal'

const FSN_DIGITS = 20

export class FrameKeys {
  /** Everything of this pipeline's WAL ends in this prefix. */
  readonly pipelinePrefix: string

  constructor(prefix: string, workspace: string, pipeline: string) {
    const base = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`
    this.pipelinePrefix = `${base}wal/${encodeURIComponent(workspace)}/${slotName(pipeline)}/`
  }

  /** Where a pipeline's WAL is, for messages: `s3://<bucket>/<prefix>wal/<workspace>/<pipeline>/`. */
  location(bucket: string): string {
    return `s3://${bucket}/${this.pipelinePrefix}`
  }

  logPrefix(log: string): string {
    return `${this.pipelinePrefix}${log}/`
  }

  writerPrefix(log: string, writer: string): string {
    return `${this.logPrefix(log)}${writer}/`
  }

  frame(log: string, writer: string, fsn: bigint): string {
    return `${this.writerPrefix(log, writer)}${fsn.toString().padStart(FSN_DIGITS, '0')}`
  }

  /** Writer and FSN of a frame key under `logPrefix(log)`; undefined for anything else. */
  parse(log: string, key: string): { readonly writer: string; readonly fsn: bigint } | undefined {
    const rest = key.slice(this.logPrefix(log).length).split('/')
    if (!key.startsWith(this.logPrefix(log)) || rest.length !== 2) return undefined
    const [writer = '', digits = ''] = rest
    return /^\d{20}$/.test(digits) ? { writer, fsn: BigInt(digits) } : undefined
  }
}
