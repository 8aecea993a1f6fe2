/**
 * The processes a server forked, for servers whose children leave its process group (sshd's
 * sessions call setsid) and so outlive a signal to the group. Reads /proc: Linux only.
 */
import { readdir, readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'

const GRACE_MS = 5_000
const POLL_MS = 50

/** Pids of every live process below `pid`, children before grandchildren. */
export async function descendants(pid: number): Promise<number[]> {
  const parents = await parentsByPid()
  const found: number[] = []
  let level = [pid]
  while (level.length > 0) {
    level = [...parents].filter(([, parent]) => level.includes(parent)).map(([child]) => child)
    found.push(...level)
  }
  return found
}

/** SIGTERM to each of `pids`, SIGKILL to those still alive after 5 s; resolves once all are gone. */
export async function terminate(pids: number[]): Promise<void> {
  for (const pid of pids) signal(pid, 'SIGTERM')
  const deadline = Date.now() + GRACE_MS
  for (let left = await alive(pids); left.length > 0; left = await alive(left)) {
    if (Date.now() > deadline) for (const pid of left) signal(pid, 'SIGKILL')
    await sleep(POLL_MS)
  }
}

async function parentsByPid(): Promise<Map<number, number>> {
  const parents = new Map<number, number>()
  for (const entry of await readdir('/proc')) {
    const stat = await readStat(Number(entry))
    if (stat && stat.state !== 'Z') parents.set(Number(entry), stat.ppid)
  }
  return parents
}

/** A zombie counts as gone: it has exited, and a container's init may never reap it. */
async function alive(pids: number[]): Promise<number[]> {
  const states = await Promise.all(pids.map(async (pid) => (await readStat(pid))?.state))
  return pids.filter((_, i) => states[i] !== undefined && states[i] !== 'Z')
}

/** State and parent from /proc/<pid>/stat, or undefined when no such process exists. */
async function readStat(pid: number): Promise<{ state: string; ppid: number } | undefined> {
  if (!Number.isInteger(pid) || pid <= 0) return undefined
  let text: string
  try {
    text = await readFile(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // The command name, in parentheses, may itself hold spaces and parentheses: the fields follow the last `)`.
  const [state, ppid] = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return state && ppid ? { state, ppid: Number(ppid) } : undefined
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name)
  } catch {
    // It has exited already.
  }
}
