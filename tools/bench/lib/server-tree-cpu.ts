/**
 * The CPU time a server spent during a client's run, where the work may be done by children it
 * forks: sshd serves each connection in a child of its own, whose CPU time is added to the
 * listener's (`cutime`, `cstime` in /proc/<pid>/stat) once it exits and is reaped. So the count
 * waits, after the run, until the listener has no child left. s3rver and Azurite fork none, and
 * then it is lib/server-cpu.ts's count.
 */
import { readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'

const TICKS_PER_SECOND = 100
/** How long a closed connection's child may take to exit and be reaped. */
const SETTLE_MS = 5_000
const POLL_MS = 20

/** User + system CPU of the process and of its children that have exited, in ms. */
async function treeCpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0)
  return (ticks * 1000) / TICKS_PER_SECOND
}

async function hasChildren(pid: number): Promise<boolean> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '')
  return children.trim() !== ''
}

/** Runs `task`, and adds the server's CPU time meanwhile, its reaped children's too, as `serverCpuMs`. */
export async function withServerTreeCpu<T extends object>(
  pid: number,
  task: () => Promise<T>,
): Promise<T & { serverCpuMs: number }> {
  const before = await treeCpuMs(pid)
  const result = await task()
  const deadline = performance.now() + SETTLE_MS
  while ((await hasChildren(pid)) && performance.now() < deadline) await sleep(POLL_MS)
  return { ...result, serverCpuMs: (await treeCpuMs(pid)) - before }
}
