/**
 * An application process for the Websocket source's end-to-end tests: a `Sender` on a disk slot that
 * sends the records `{"sender":<id>,"n":<n>}` with n = the record's FSN, carrying on after whatever
 * the slot already holds (a killed run's records are in it), up to `total`. Prints `sent` once every
 * record is in the slot and `done` once every one is acknowledged (with `durable`, once each has
 * landed in the destination), then closes.
 *
 * Usage: node --import tsx websocket-app.ts <addr> <sfDir> <senderId> <total> <durable: on|off> <pauseMs>
 * `pauseMs` between groups of records makes the run last long enough to be killed in the middle.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { Sender } from '@skippr/sf'

const [addr, sfDir, senderId, totalText, durable, pauseText] = process.argv.slice(2)
const total = Number(totalText)
const pauseMs = Number(pauseText)
/** Records sent before waiting for their FSNs. */
const GROUP = 100

const sender = await Sender.fromConfig(
  `ws::addr=${addr};sf_dir=${sfDir};sender_id=${senderId};request_durable_ack=${durable};` +
    'reconnect_initial_backoff_millis=20;reconnect_max_backoff_millis=250;close_flush_timeout_millis=0;',
  { onError: (error) => console.error(`sender: ${error.message}`) },
)
for (let next = Number(sender.publishedFsn) + 1; next <= total; next += GROUP) {
  const group: Promise<void>[] = []
  for (let n = next; n < next + GROUP && n <= total; n++) {
    const record = Buffer.from(JSON.stringify({ sender: senderId, n }))
    group.push(
      sender.sendBlocking(record).then((fsn) => {
        if (fsn !== BigInt(n)) throw new Error(`record ${n} got FSN ${fsn}`)
      }),
    )
  }
  await Promise.all(group)
  await sleep(pauseMs)
}
process.stdout.write('sent\n')
await sender.flush()
process.stdout.write('done\n')
await sender.close()
