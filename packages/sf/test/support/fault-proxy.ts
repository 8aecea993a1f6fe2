/**
 * A TCP proxy for tests that sits between a sender and a receiver and injects faults: it can cut
 * connections in the middle of a chunk (so a WebSocket frame arrives truncated), stall traffic, reset
 * connections with RST, refuse new connections, and cut connections at random byte counts (chaos).
 */
import net from 'node:net'

interface Pair {
  client: net.Socket
  upstream: net.Socket
  /** Bytes forwarded since the connection opened, and the count at which chaos cuts it. */
  forwarded: number
  cutAt: number
}

export interface FaultProxy {
  readonly port: number
  /** Connections accepted so far. */
  readonly accepted: number
  /** Cut the connection that forwards the next chunk (either direction) after only half of that chunk. */
  dropMidFrame(): void
  /** Stop forwarding (buffers are held, sockets stay open) until `resume()`. */
  stall(): void
  resume(): void
  /** Reset every open connection (TCP RST). */
  reset(): void
  /** While on, new connections are closed as soon as they arrive. */
  refuse(on: boolean): void
  /** Cut each connection after a random number of forwarded bytes in [min, max]; `undefined` turns it off. */
  chaos(range: [number, number] | undefined): void
  close(): Promise<void>
}

export async function startFaultProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<FaultProxy> {
  const pairs = new Set<Pair>()
  let stalled = false
  let refusing = false
  let dropNext = false
  let chaosRange: [number, number] | undefined
  let accepted = 0
  const held: Array<() => void> = []

  const pickCut = (): number =>
    chaosRange
      ? chaosRange[0] + Math.floor(Math.random() * (chaosRange[1] - chaosRange[0] + 1))
      : Number.POSITIVE_INFINITY

  function destroy(pair: Pair, rst: boolean): void {
    pairs.delete(pair)
    for (const s of [pair.client, pair.upstream]) {
      if (rst && !s.destroyed && s.readyState === 'open') s.resetAndDestroy()
      else s.destroy()
    }
  }

  function forward(pair: Pair, from: net.Socket, to: net.Socket, chunk: Buffer): void {
    if (stalled) {
      from.pause()
      held.push(() => {
        forward(pair, from, to, chunk)
        from.resume()
      })
      return
    }
    if (!pairs.has(pair)) return
    const midDrop = dropNext
    if (midDrop || pair.forwarded + chunk.length > pair.cutAt) {
      dropNext = false
      const keep = midDrop ? chunk.length >> 1 : pair.cutAt - pair.forwarded
      pairs.delete(pair)
      to.write(chunk.subarray(0, keep), () => destroy(pair, false))
      return
    }
    pair.forwarded += chunk.length
    to.write(chunk)
  }

  const server = net.createServer((client) => {
    accepted++
    if (refusing) {
      client.destroy()
      return
    }
    const upstream = net.connect(targetPort, targetHost)
    const pair: Pair = { client, upstream, forwarded: 0, cutAt: pickCut() }
    pairs.add(pair)
    client.on('data', (chunk: Buffer) => forward(pair, client, upstream, chunk))
    upstream.on('data', (chunk: Buffer) => forward(pair, upstream, client, chunk))
    for (const s of [client, upstream]) {
      s.on('error', () => destroy(pair, false))
      s.on('close', () => destroy(pair, false))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address() as net.AddressInfo

  return {
    port: address.port,
    get accepted() {
      return accepted
    },
    dropMidFrame() {
      dropNext = true
    },
    stall() {
      stalled = true
    },
    resume() {
      stalled = false
      for (const release of held.splice(0)) release()
    },
    reset() {
      for (const pair of [...pairs]) destroy(pair, true)
    },
    refuse(on) {
      refusing = on
    },
    chaos(range) {
      chaosRange = range
      for (const pair of pairs) pair.cutAt = pair.forwarded + pickCut()
    },
    async close() {
      stalled = false
      held.length = 0
      for (const pair of [...pairs]) destroy(pair, false)
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
