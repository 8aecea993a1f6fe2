/** Readiness probes: does a server on 127.0.0.1 answer yet? */
import { connect } from 'node:net'

const PROBE_TIMEOUT_MS = 1000

/** True once `url` answers HTTP at all, whatever the status: the server takes requests then. */
export async function answersHttp(url: string): Promise<boolean> {
  try {
    // `connection: close`, so that no idle keep-alive connection holds up the server's stop.
    const response = await fetch(url, {
      headers: { connection: 'close' },
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    })
    await response.arrayBuffer()
    return true
  } catch {
    return false
  }
}

/** True once a connection to `port` receives a first line that starts with `prefix`. */
export function greetsWith(host: string, port: number, prefix: string): Promise<boolean> {
  return new Promise((resolve) => {
    let received = ''
    const socket = connect(port, host)
    socket.setTimeout(PROBE_TIMEOUT_MS, () => socket.destroy())
    socket.on('data', (chunk) => {
      received += chunk
      if (received.includes('\n') || received.length >= prefix.length) socket.destroy()
    })
    socket.on('error', () => {})
    socket.on('close', () => resolve(received.startsWith(prefix)))
  })
}
