/** Rounds of a bench: the parts of one round run in turns, so that none always gets the warmer machine. */

type Task = () => Promise<unknown>
/** A task's result; undefined for a task left out. */
type Result<F> = F extends Task ? Awaited<ReturnType<F>> : undefined
type Results<T extends Record<string, Task | undefined>> = { [K in keyof T]: Result<T[K]> }

/**
 * Runs the tasks one after the other, starting one further along the list each round, so none
 * always gets the warmer machine (with two, they take turns going first).
 */
export async function inRotation<T extends Record<string, Task | undefined>>(
  round: number,
  tasks: T,
): Promise<Results<T>> {
  const named = Object.entries(tasks).filter((entry): entry is [string, Task] => entry[1] !== undefined)
  const results: Record<string, unknown> = {}
  for (let i = 0; i < named.length; i++) {
    const [name, task] = named[(round + i) % named.length]!
    results[name] = await task()
  }
  return results as Results<T>
}
