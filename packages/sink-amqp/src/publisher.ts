/**
 * Publishing a batch's messages on a confirm channel with at most `window` of them unconfirmed,
 * pausing when the socket's buffer is full. It stops at the first nack, returned message or closed
 * channel, and answers only once every message it published is confirmed or failed, so nothing of
 * one write is still in flight when the next begins.
 */
import type { ConfirmChannel, Message } from 'amqplib'
import type { OutgoingMessage } from './messages.js'

export type PublishResult =
  | { readonly status: 'confirmed' }
  | { readonly status: 'returned'; readonly message: Message }
  | { readonly status: 'failed'; readonly error: Error }

export async function publishAll(
  channel: ConfirmChannel,
  exchange: string,
  messages: Iterable<OutgoingMessage>,
  window: number,
): Promise<PublishResult> {
  let returned: Message | undefined
  let failure: Error | undefined
  // The broker returns a message before it confirms it, so a return is known before its confirm.
  const onReturn = (message: Message) => {
    returned ??= message
  }
  channel.on('return', onReturn)
  const flight = new Flight()
  try {
    for (const message of messages) {
      await flight.below(window)
      if (returned || failure) break
      const { routingKey, content, options } = message
      const room = channel.publish(exchange, routingKey, content, options, (error: unknown) => {
        if (error) failure ??= error instanceof Error ? error : new Error(String(error))
        flight.settled()
      })
      flight.started()
      if (!room) await drained(channel)
    }
  } catch (error) {
    // publish throws when the channel has closed under it.
    failure ??= error instanceof Error ? error : new Error(String(error))
  } finally {
    await flight.below(1)
    channel.off('return', onReturn)
  }
  // A returned message would be returned again on a retry, whatever else failed.
  if (returned) return { status: 'returned', message: returned }
  if (failure) return { status: 'failed', error: failure }
  return { status: 'confirmed' }
}

/** The count of published, unconfirmed messages; `below` waits until it drops under a limit. */
class Flight {
  private inFlight = 0
  private wake: (() => void) | undefined

  started(): void {
    this.inFlight++
  }

  settled(): void {
    this.inFlight--
    const wake = this.wake
    this.wake = undefined
    wake?.()
  }

  async below(limit: number): Promise<void> {
    while (this.inFlight >= limit) await new Promise<void>((resolve) => (this.wake = resolve))
  }
}

/** Resolves when the channel can take more, or has closed (and its messages fail). */
function drained(channel: ConfirmChannel): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      channel.off('drain', done)
      channel.off('close', done)
      resolve()
    }
    channel.on('drain', done)
    channel.on('close', done)
  })
}
