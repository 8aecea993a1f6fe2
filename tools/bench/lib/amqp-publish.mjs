// The raw limit of publishing rows to RabbitMQ at least once: a bare Node process with amqplib that
// publishes the messages skipprd's AMQP sink published (the bodies and parts lib/rabbitmq.ts took
// off the queue), each persistent and mandatory with the sink's id, headers and content type, on one
// confirm channel with at most <window> unconfirmed, and exits once the broker has confirmed them
// all. It reads no source and keeps no WAL or state: what skipprd adds to this is its own cost.
// Plain JavaScript, so no loader's start-up is counted.
// Usage: node lib/amqp-publish.mjs <url> <exchange> <bodies file> <parts file> <window>
import { readFile } from 'node:fs/promises'
import { connect } from 'amqplib'

const LF = 10

const [url, exchange, bodiesFile, partsFile, windowText] = process.argv.slice(2)
const window = Number(windowText)
const bodies = await readFile(bodiesFile)
const parts = JSON.parse(await readFile(partsFile, 'utf8'))

// The sink's connection options: without noDelay each publish waits on the broker's delayed ACK.
const model = await connect(url, { noDelay: true })
const channel = await model.createConfirmChannel()
let failure
channel.on('return', (message) => {
  failure ??= new Error(`returned: ${message.fields.replyText}`)
})

let inFlight = 0
let wake
const settled = (error) => {
  if (error) failure ??= error
  inFlight--
  wake?.()
}
const below = async (limit) => {
  while (inFlight >= limit) await new Promise((resolve) => (wake = resolve))
}

let start = 0
for (const part of parts) {
  const headers = {
    'x-skippr-batch': part.key,
    'x-skippr-seq': part.seq,
    'x-skippr-namespace': part.namespace,
  }
  for (let row = 0; row < part.rows; row++) {
    const end = bodies.indexOf(LF, start)
    await below(window)
    if (failure) throw failure
    const room = channel.publish(
      exchange,
      part.namespace,
      bodies.subarray(start, end),
      {
        persistent: true,
        mandatory: true,
        messageId: `${part.key}:${row}`,
        contentType: part.contentType,
        headers,
      },
      settled,
    )
    inFlight++
    start = end + 1
    if (!room) await new Promise((resolve) => channel.once('drain', resolve))
  }
}
await below(1)
if (failure) throw failure
await channel.close()
await model.close()
