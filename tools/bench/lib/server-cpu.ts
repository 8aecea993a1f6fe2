/**
 * The CPU time of a server process beside a client's run: what the server spent on the same rows,
 * read from /proc before and after. The server is found by its command line, as the bench knows it
 * only by the config or name it was started with.
 */
import { readdir, readFile } from 'node:fs/promises'

/** Linux's clock ticks per second for /proc/<pid>/stat (`getconf CLK_TCK`). */
const TICKS_PER_SECOND = 100

/** The pid of the one process whose command line holds `text`. */
export async function serverPid(text: string): Promise<number> {
  const found: number[] = []
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')
    if (cmdline.replaceAll('\0', ' ').includes(text)) found.push(Number(entry))
  }
  if (found.length !== 1)
    throw new Error(`${found.length} processes run with ${JSON.stringify(text)}, expected 1`)
  return found[0]!
}

/** User + system CPU time the process has used so far, all threads, in ms. */
export async function cpuMsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  // The fields after the command name, which is in brackets and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const [utime, stime] = [Number(fields[11]), Number(fields[12])]
  return ((utime + stime) * 1000) / TICKS_PER_SECOND
}

/** Runs `task`, and adds the server's CPU time meanwhile as `serverCpuMs`. */
export async function withServerCpu<T extends object>(
  pid: number,
  task: () => Promise<T>,
): Promise<T & { serverCpuMs: number }> {
  const before = await cpuMsOf(pid)
  const result = await task()
  return { ...result, serverCpuMs: (await cpuMsOf(pid)) - before }
}

/** The process's peak resident set size (VmHWM), in MB. */
export async function peakRssMbOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]) / 1024
}
