import { type ChannelModel, type ConfirmChannel, connect } from 'amqplib'

/** How long opening a connection may take before it counts as unreachable. */
const CONNECT_TIMEOUT_MS = 10_000
/** How long closing waits for the broker's answer; a broker that never answers is not waited for. */
const CLOSE_TIMEOUT_MS = 5_000

/** Whether, and why, the broker or the network ended a link. */
class Ending {
  cause: Error | undefined
  ended = false
  private settle = () => {}
  /** Settles when the link has ended. */
  readonly settled = new Promise<void>((resolve) => {
    this.settle = resolve
  })
  readonly record = (error?: Error) => {
    if (error) this.cause ??= error
  }
  readonly end = (error?: Error) => {
    this.record(error)
    this.ended = true
    this.settle()
  }
}

/**
 * One connection and its confirm channel. The broker or the network may end either at any time;
 * the link then records why and stays closed, and the sink opens a new one for the next write.
 */
export class Link {
  private constructor(
    readonly model: ChannelModel,
    readonly channel: ConfirmChannel,
    private readonly ending: Ending,
  ) {}

  static async open(url: string): Promise<Link> {
    // Without noDelay, Nagle's algorithm holds each small publish until the broker's delayed ACK
    // (about 40 ms), and a window of confirms moves at that pace.
    const model = await connect(url, { timeout: CONNECT_TIMEOUT_MS, noDelay: true })
    // An emitted error without a listener would end the process.
    const ending = new Ending()
    model.on('error', ending.record)
    model.on('close', ending.end)
    try {
      const channel = await model.createConfirmChannel()
      channel.on('error', ending.record)
      channel.on('close', () => ending.end())
      return new Link(model, channel, ending)
    } catch (error) {
      await model.close().catch(() => {})
      throw ending.cause ?? error
    }
  }

  /** Whether the channel (or its connection) has closed: nothing more can be published on it. */
  get closed(): boolean {
    return this.ending.ended
  }

  /** Why the link closed: the broker's or the socket's error, else `fallback`. */
  closedBy(fallback: Error): Error {
    return this.ending.cause ?? fallback
  }

  /**
   * Whether `exchange` exists. Asked on a channel of its own, because the broker closes the channel
   * that asks for a missing exchange.
   */
  async checkExchange(exchange: string): Promise<void> {
    const channel = await this.model.createChannel()
    channel.on('error', () => {})
    try {
      await channel.checkExchange(exchange)
    } finally {
      await channel.close().catch(() => {})
    }
  }

  /**
   * Declares `exchange` durable with `type` when it is missing; the broker refuses (406) one that
   * exists with another type or durability. On a channel of its own, as the refusal closes it.
   */
  async declareExchange(exchange: string, type: string): Promise<void> {
    const channel = await this.model.createChannel()
    channel.on('error', () => {})
    try {
      await channel.assertExchange(exchange, type, { durable: true })
    } finally {
      await channel.close().catch(() => {})
    }
  }

  /**
   * Closes channel and connection; never throws. A close in flight when the socket dies is never
   * answered (amqplib leaves it pending), so it stops waiting once the link has ended, or after
   * CLOSE_TIMEOUT_MS.
   */
  async close(): Promise<void> {
    const closing = (async () => {
      if (!this.ending.ended) await this.channel.close().catch(() => {})
      await this.model.close().catch(() => {})
    })()
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CLOSE_TIMEOUT_MS)
    })
    await Promise.race([closing, this.ending.settled, timeout])
    clearTimeout(timer)
  }
}
