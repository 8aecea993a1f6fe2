/**
 * Child process for crash tests: appends records `rec-<n>` with n = FSN, continuing from whatever the slot
 * already holds, until `total`. Prints `appended` once all are in the slot, `done` once all are acked.
 * Usage: node --import tsx crash-sender.ts <addr> <sfDir> <senderId> <total> [pauseMs]
 * `pauseMs` between groups of 20 keeps a run long enough to be killed in the middle on a fast machine.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { Sender } from '../../src/sender.js'

const [addr, sfDir, senderId, totalText, pauseText = '0'] = process.argv.slice(2)
const total = Number(totalText)
const pauseMs = Number(pauseText)
const sender = await Sender.fromConfig(
  `ws::addr=${addr};sf_dir=${sfDir};sender_id=${senderId};reconnect_initial_backoff_millis=20;reconnect_max_backoff_millis=200;`,
  { onError: (e) => console.error(e.message) },
)
for (let next = Number(sender.publishedFsn) + 1; next <= total; next += 20) {
  const group = []
  for (let n = next; n < next + 20 && n <= total; n++) {
    group.push(
      sender.sendBlocking(Buffer.from(`rec-${n}`)).then((fsn) => {
        if (fsn !== BigInt(n)) throw new Error(`record ${n} got FSN ${fsn}`)
      }),
    )
  }
  await Promise.all(group)
  if (pauseMs > 0) await sleep(pauseMs)
}
process.stdout.write('appended\n')
await sender.flush()
process.stdout.write('done\n')
await sender.close()
