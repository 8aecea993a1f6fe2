import { SkipprError } from '@skippr/connector-api'

export const UNAVAILABLE = 'SKIPPR_AMQP_UNAVAILABLE'
export const TRANSIENT = 'SKIPPR_AMQP_TRANSIENT'
export const ACCESS_REFUSED = 'SKIPPR_AMQP_ACCESS_REFUSED'
export const VHOST_REFUSED = 'SKIPPR_AMQP_VHOST_REFUSED'
export const EXCHANGE_MISSING = 'SKIPPR_AMQP_EXCHANGE_MISSING'
export const EXCHANGE_MISMATCH = 'SKIPPR_AMQP_EXCHANGE_MISMATCH'
export const UNROUTABLE = 'SKIPPR_AMQP_UNROUTABLE'
export const REJECTED = 'SKIPPR_AMQP_REJECTED'
export const ROUTING_KEY = 'SKIPPR_AMQP_ROUTING_KEY'

/** A sink error with the broker's AMQP reply code (403, 404, 530, …) when the broker sent one. */
export class AmqpSinkError extends SkipprError {
  readonly replyCode: number | undefined
  constructor(code: string, message: string, cause?: unknown) {
    super(code, message, cause === undefined ? undefined : { cause })
    this.replyCode = replyCodeOf(cause)
  }
}

/** The broker could not be reached, or the connection broke: retry later. */
export class UnavailableError extends AmqpSinkError {
  constructor(target: string, cause: unknown) {
    super(
      UNAVAILABLE,
      `cannot reach RabbitMQ at ${target}: ${messageOf(cause)}; the batch stays in the WAL and is retried ` +
        'once the broker is reachable',
      cause,
    )
  }
}

/** A nack, or a channel the broker closed for a reason a retry may not meet again. */
export class TransientError extends AmqpSinkError {
  constructor(target: string, cause: unknown) {
    super(
      TRANSIENT,
      `publishing to ${target} failed for now: ${messageOf(cause)}; the batch is retried`,
      cause,
    )
  }
}

/** Wrong user or password, or a user without permission on the exchange. */
export class AccessRefusedError extends AmqpSinkError {
  constructor(target: string, cause: unknown) {
    super(
      ACCESS_REFUSED,
      `RabbitMQ at ${target} refused access: ${brokerText(cause)}; check the user and password in url and ` +
        "the user's permissions on the vhost (rabbitmqctl set_permissions)",
      cause,
    )
  }
}

/** The vhost does not exist, or the user may not use it (530 NOT_ALLOWED when opening). */
export class VhostRefusedError extends AmqpSinkError {
  constructor(target: string, vhost: string, cause: unknown) {
    super(
      VHOST_REFUSED,
      `RabbitMQ at ${target} refused to open vhost ${JSON.stringify(vhost)} (NOT_ALLOWED): it does not exist ` +
        'or the user has no permissions on it; fix the vhost in url, or create it (rabbitmqctl add_vhost) and ' +
        'grant the user access (rabbitmqctl set_permissions)',
      cause,
    )
  }
}

export class ExchangeMissingError extends AmqpSinkError {
  constructor(target: string, exchange: string, cause: unknown) {
    super(
      EXCHANGE_MISSING,
      `exchange ${JSON.stringify(exchange)} does not exist on ${target} (404 NOT_FOUND); declare it, or fix ` +
        'exchange in the config, or set declare_exchange to have the sink declare it',
      cause,
    )
  }
}

/** `declare_exchange` names a type (or durability) other than the existing exchange's (406 PRECONDITION_FAILED). */
export class ExchangeMismatchError extends AmqpSinkError {
  constructor(target: string, exchange: string, type: string, cause: unknown) {
    super(
      EXCHANGE_MISMATCH,
      `exchange ${JSON.stringify(exchange)} exists on ${target} but not as a durable ${type} exchange ` +
        `(${brokerText(cause)}); set declare_exchange to its type, or remove declare_exchange to use it as it is`,
      cause,
    )
  }
}

/** A mandatory message the broker returned: no queue is bound for its routing key. */
export class UnroutableError extends AmqpSinkError {
  constructor(exchange: string, routingKey: string, namespace: string, reply: string) {
    const where =
      exchange === ''
        ? `the default exchange has no queue named ${JSON.stringify(routingKey)}`
        : `exchange ${JSON.stringify(exchange)} has no queue bound for routing key ${JSON.stringify(routingKey)}`
    super(
      UNROUTABLE,
      `a message of namespace ${namespace} was returned unroutable (${reply}): ${where}; bind a queue to the ` +
        'exchange with a matching pattern, or check routing_key; the batch is not landed',
    )
  }
}

/** Any other refusal by the broker (a message over its size limit, a failed precondition). */
export class RejectedError extends AmqpSinkError {
  constructor(target: string, exchange: string, cause: unknown) {
    super(
      REJECTED,
      `RabbitMQ at ${target} refused a publish to exchange ${JSON.stringify(exchange)}: ${brokerText(cause)}; ` +
        'fix the cause it names (for an oversized message use message_per: row or smaller batches)',
      cause,
    )
  }
}

/** The routing key cannot be made for a row or a schema. */
export class RoutingKeyError extends AmqpSinkError {
  constructor(message: string) {
    super(ROUTING_KEY, message)
  }
}

/** The AMQP reply code of a broker's close, if `error` carries one. */
export function replyCodeOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | undefined)?.code
  if (typeof code === 'number') return code
  // A refusal during the opening handshake comes as text only.
  const text = /Handshake terminated by server: (\d{3})/.exec(messageOf(error))?.[1]
  return text === undefined ? undefined : Number(text)
}

/** The broker's own words (`NOT_FOUND - no exchange …`), or the error's message. */
function brokerText(error: unknown): string {
  const message = messageOf(error)
  return /with message "(.*)"$/s.exec(message)?.[1] ?? message
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
