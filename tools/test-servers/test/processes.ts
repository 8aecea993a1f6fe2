/** What a stopped server may leave behind: listening ports and processes (read from /proc, Linux). */
import { readdirSync, readFileSync } from 'node:fs'
import { connect } from 'node:net'

/** True when nothing accepts connections on the port of 127.0.0.1. */
export function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy()
      resolve(false)
    })
    socket.on('error', () => resolve(true))
  })
}

/** Pids of the live processes that have `argument` among their command-line arguments. */
export function pidsWithArgument(argument: string): number[] {
  return readdirSync('/proc')
    .map(Number)
    .filter((pid) => isRunning(pid) && readProc(pid, 'cmdline')?.split('\0').includes(argument))
}

/** True while the process exists and is not a zombie. */
export function isRunning(pid: number): boolean {
  const stat = readProc(pid, 'stat')
  return stat !== undefined && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
}

function readProc(pid: number, file: string): string | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8')
  } catch {
    return undefined
  }
}
