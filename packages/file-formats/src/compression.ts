/**
 * The gzip and zstd codecs, for whole JSON-lines and CSV files and for Parquet's pages. Both are
 * deterministic for a given input and level, so a retried batch compresses to the same bytes and
 * its checksum matches the object an earlier attempt created.
 */
import { gzipSync } from 'node:zlib'
import { compress as zstdCompress, init as zstdInit } from '@bokuweb/zstd-wasm'
import type { Compression } from './encoding.js'

const GZIP_LEVEL = 6
const ZSTD_LEVEL = 3

let zstdLoading: Promise<void> | undefined
/** Set once the WebAssembly module is loaded: zstdBytes, called synchronously, cannot wait for it. */
let zstdLoaded = false

/** Loads zstd's WebAssembly module, once per process; zstdBytes needs it loaded. */
export function zstdReady(): Promise<void> {
  zstdLoading ??= zstdInit().then(() => {
    zstdLoaded = true
  })
  return zstdLoading
}

/** `bytes` as one gzip member. */
export function gzipBytes(bytes: Uint8Array): Uint8Array {
  return gzipSync(bytes, { level: GZIP_LEVEL })
}

/**
 * `bytes` as one zstd frame. Synchronous, as hyparquet-writer calls its compressors, so
 * `await zstdReady()` must have come first.
 */
export function zstdBytes(bytes: Uint8Array): Uint8Array {
  if (!zstdLoaded) throw new Error('zstd is not loaded yet: await zstdReady() before compressing with zstd')
  return zstdCompress(bytes, ZSTD_LEVEL)
}

/** `chunks` compressed as one stream; returned as they are for `none`. */
export async function compressChunks(chunks: Uint8Array[], compression: Compression): Promise<Uint8Array[]> {
  if (compression === 'none') return chunks
  const whole = chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks)
  if (compression === 'gzip') return [gzipBytes(whole)]
  await zstdReady()
  return [zstdBytes(whole)]
}
