/**
 * A load ended by SIGKILL midway, as a crash, an OOM kill or a lost machine ends it: the command runs
 * as a child process until another connection sees at least `atLeast` rows committed, and is then
 * killed. What it left behind is what a rerun starts from.
 */
import { spawn } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'

export interface KillOptions {
  readonly cwd?: string
  readonly env?: NodeJS.ProcessEnv
}

/** How often the committed rows are counted while the load runs. */
const POLL_MS = 10

/**
 * Runs `command` until `committed()` reaches `atLeast`, kills it with SIGKILL, and returns the rows
 * committed once it is gone. Throws if it ends by itself first: then it was not killed midway.
 */
export async function killMidway(
  command: string,
  args: readonly string[],
  options: KillOptions,
  committed: () => Promise<number>,
  atLeast: number,
): Promise<number> {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  for (const stream of [child.stdout, child.stderr])
    stream.setEncoding('utf8').on('data', (text: string) => {
      output += text
    })
  let ended = false
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => {
      ended = true
      resolve({ code, signal })
    })
  })
  while (!ended && (await committed()) < atLeast) await sleep(POLL_MS)
  child.kill('SIGKILL')
  const { code, signal } = await exit
  if (signal !== 'SIGKILL')
    throw new Error(
      `${command} exited ${code} before ${atLeast} rows were committed and it was killed:\n${output}`,
    )
  return committed()
}
