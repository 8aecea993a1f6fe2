/**
 * The HttpServer exactly-once harness: a client posts numbered records (`{"n": i}`), each request
 * with an Idempotency-Key, retrying on any failure until it gets 200, while the skipprd serving them
 * is SIGKILLed at random moments and restarted. `landAll` then runs skipprd until the destination
 * holds every acknowledged record (the last batches land after the final restart).
 */
import type { ChildProcess } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { exited, spawnCli } from './cli.js'

/**
 * A skippr.yml whose pipeline `push` reads an HttpServer source on 127.0.0.1:`port` (namespace
 * `events`, with `source` appended to its fields, e.g. `, token: ${TOKEN}`) into `sink`.
 */
export function httpPushConfig(port: number, sink: string, source = ''): string {
  return [
    'data_sources:',
    '  http:',
    `    HttpServer: { listen: 127.0.0.1:${port}, namespace: events${source} }`,
    'data_sinks:',
    '  warehouse:',
    `    ${sink}`,
    'pipelines:',
    '  push:',
    '    data_source: data_sources.http',
    '    data_sink: data_sinks.warehouse',
    '',
  ].join('\n')
}

export interface PushRun {
  readonly cwd: string
  readonly pipeline: string
  readonly port: number
  readonly env?: Record<string, string>
}

/** The sync, started (it listens once its lease is taken). */
export function startSync(run: PushRun): ChildProcess {
  const child = spawnCli(['sync', '--pipeline', run.pipeline, '--output', 'text'], {
    cwd: run.cwd,
    env: run.env,
  })
  child.stdout?.resume()
  child.stderr?.resume()
  return child
}

/** Posts `body` until it is answered 200 (every other outcome, a refused connection included, is retried). */
export async function postUntilCommitted(
  port: number,
  key: string,
  body: string,
  deadline: number,
): Promise<number> {
  let attempts = 0
  for (;;) {
    attempts++
    if (Date.now() > deadline) throw new Error(`request ${key} was not committed before the deadline`)
    const status = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      headers: { 'idempotency-key': key },
      body,
      signal: AbortSignal.timeout(10_000),
    }).then(
      async (response) => {
        await response.arrayBuffer()
        return response.status
      },
      () => 0,
    )
    if (status === 200) return attempts
    await sleep(status === 0 ? 100 : 20)
  }
}

/**
 * Sends records 0..records-1 in requests of `perRequest`, SIGKILLing and restarting the sync
 * `kills` times at random moments, and after each restart sending the request answered just before
 * it again (its 200 lost, for all the client knows); returns the sync still running.
 */
export async function sendWithKills(
  run: PushRun,
  options: { records: number; perRequest: number; kills: number; deadline: number },
): Promise<ChildProcess> {
  let sync = startSync(run)
  const requests = Math.ceil(options.records / options.perRequest)
  const killAt = new Set<number>()
  while (killAt.size < Math.min(options.kills, requests)) killAt.add(Math.floor(Math.random() * requests))
  let next = 0
  let restarts = Promise.resolve()
  const client = async () => {
    while (next < requests) {
      const r = next++
      const from = r * options.perRequest
      const to = Math.min(from + options.perRequest, options.records)
      let body = ''
      for (let n = from; n < to; n++) body += `${JSON.stringify({ n })}\n`
      await postUntilCommitted(run.port, `req-${r}`, body, options.deadline)
      if (killAt.delete(r)) {
        // One restart at a time: two clients killing at once would leave a second sync running.
        restarts = restarts.then(async () => {
          // A random moment: right after a 200, or a little later while other requests are in flight.
          await sleep(Math.random() * 30)
          sync.kill('SIGKILL')
          await exited(sync)
          sync = startSync(run)
        })
        await restarts
        // As if its 200 had been lost in the kill: the client's retry must append nothing.
        await postUntilCommitted(run.port, `req-${r}`, body, options.deadline)
      }
    }
  }
  // Concurrent clients, so kills also land while other requests wait for their commit.
  await Promise.all([client(), client(), client(), client()])
  return sync
}

/** Stops the sync cleanly (SIGTERM), waiting for it to exit. */
export async function stopSync(sync: ChildProcess): Promise<void> {
  if (sync.exitCode === null && sync.signalCode === null) sync.kill('SIGTERM')
  await exited(sync)
}
