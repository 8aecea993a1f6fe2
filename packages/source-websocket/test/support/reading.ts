/**
 * Plays the runner's part for a source under test: reads it from an offset, collects its chunks,
 * and commits or lands them when the test says so (what skipprd does after its WAL commit and after
 * the destination holds a batch).
 */
import { connect, createServer } from 'node:net'
import {
  type ConnectorContext,
  type SourceChunk,
  type SourceOffset,
  silentLogger,
} from '@skippr/connector-api'
import { WebsocketSource } from '../../src/source.js'

export interface Reading {
  readonly source: WebsocketSource
  readonly chunks: SourceChunk[]
  /** Resolves once `count` chunks were read in all. */
  read(count: number): Promise<SourceChunk[]>
  /** Commits every chunk read so far: the source's `committed` with the last one's offset. */
  commit(): SourceOffset
  stop(): Promise<void>
}

export const context: ConnectorContext = {
  configDir: '.',
  dataDir: '.',
  pipeline: 'events',
  logger: silentLogger,
}

export async function startReading(
  port: number,
  from: SourceOffset | undefined,
  extra: Partial<ConstructorParameters<typeof WebsocketSource>[0]> = {},
): Promise<Reading> {
  const source = new WebsocketSource(
    {
      listen: `127.0.0.1:${port}`,
      format: 'jsonl',
      namespace: 'events',
      max_frame_bytes: 1 << 20,
      commit_interval_ms: 20,
      ...extra,
    },
    context,
  )
  const stopping = new AbortController()
  const chunks: SourceChunk[] = []
  let wake: () => void = () => {}
  const reading = (async () => {
    for await (const chunk of source.read(from, { signal: stopping.signal, follow: true })) {
      chunks.push(chunk)
      wake()
    }
  })()
  const read = async (count: number) => {
    while (chunks.length < count) await new Promise<void>((resolve) => (wake = resolve))
    return chunks.slice(0, count)
  }
  // The receiver is listening once a connection to the port succeeds.
  await listening(port)
  return {
    source,
    chunks,
    read,
    commit() {
      const offset = chunks[chunks.length - 1]!.offset
      source.committed(offset)
      return offset
    },
    async stop() {
      stopping.abort()
      await reading
      await source.close()
    },
  }
}

/** A port nobody listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

async function listening(port: number): Promise<void> {
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.once('connect', () => {
        socket.destroy()
        resolve(true)
      })
      socket.once('error', () => resolve(false))
    })
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
