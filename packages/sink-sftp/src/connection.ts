/**
 * One SSH connection with its SFTP channel, opened on first use and opened anew after it drops:
 * a drop fails the requests in flight (they are retried as a lost connection), and the next
 * request connects again. The server's host key is checked against `host_key` when one is set.
 */
import { createHash } from 'node:crypto'
import type { Logger } from '@skippr/connector-api'
import { permanent } from '@skippr/connector-api'
import SftpClient from 'ssh2-sftp-client'
import type { LoginContext } from './errors.js'
import { HostKeyMismatchError, loginFailure } from './errors.js'
import type { ServerAddress } from './remote-root.js'
import type { Sftp } from './requests.js'

export interface SftpLogin extends ServerAddress {
  readonly password?: string | undefined
  readonly privateKey?: string | undefined
  readonly passphrase?: string | undefined
  /** The fingerprint (`SHA256:…`) the server's host key must have; without it any key is accepted. */
  readonly hostKey?: string | undefined
}

interface Session {
  readonly client: SftpClient
  readonly sftp: Sftp
}

const READY_TIMEOUT_MS = 20_000
// A connection that died without a FIN (a dropped route, a sleeping NAT) is noticed within 30 s,
// so requests waiting on it fail and are retried instead of hanging.
const KEEPALIVE_INTERVAL_MS = 10_000
const KEEPALIVE_COUNT_MAX = 3

/** The host key fingerprint as `ssh-keygen -lf` prints it: `SHA256:` and unpadded base64. */
export function hostKeyFingerprint(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`
}

export class SftpConnection {
  private session: Promise<Session> | undefined
  private toldUnverified = false

  constructor(
    private readonly login: SftpLogin,
    private readonly context: LoginContext,
    private readonly logger: Logger,
  ) {}

  /** The SFTP channel, connecting first when there is no live connection. */
  async channel(): Promise<Sftp> {
    this.session ??= this.connect()
    return (await this.session).sftp
  }

  /** Ends the connection, if any; never throws. */
  async close(): Promise<void> {
    const session = this.session
    this.session = undefined
    const open = await session?.catch(() => undefined)
    await open?.client.end().catch(() => undefined)
  }

  private connect(): Promise<Session> {
    let presented: string | undefined
    let refused: unknown
    // Bound below, before any event can fire: the wrapper's callbacks run on later ticks.
    let session: Promise<Session> | undefined
    const forget = () => {
      if (this.session === session) this.session = undefined
    }
    const client = new SftpClient('skippr', { error: forget, end: forget, close: forget })
    // ssh2's own error, with the `level` (authentication, timeout, socket) the wrapper drops.
    client.on('error', (error: unknown) => {
      refused ??= error
    })
    // Every request is a small packet waiting for its answer: with Nagle's algorithm each one
    // waits for the delayed ACK of the one before (40 ms each on Linux). The listener runs on
    // ssh2's client, whose setNoDelay sets the socket's.
    client.on('connect', function (this: { setNoDelay(noDelay: boolean): void }) {
      this.setNoDelay(true)
    })
    const hostVerifier = (key: Buffer): boolean => {
      presented = hostKeyFingerprint(key)
      if (this.login.hostKey === undefined) this.tellUnverified(presented)
      return this.login.hostKey === undefined || presented === this.login.hostKey
    }
    session = (async () => {
      try {
        const sftp = await client.connect({
          host: this.login.host,
          port: this.login.port,
          username: this.login.username,
          password: this.login.password,
          privateKey: this.login.privateKey,
          passphrase: this.login.passphrase,
          hostVerifier,
          readyTimeout: READY_TIMEOUT_MS,
          keepaliveInterval: KEEPALIVE_INTERVAL_MS,
          keepaliveCountMax: KEEPALIVE_COUNT_MAX,
        })
        // The channel can fail or close while the connection stays up (a server whose sftp
        // process died): end the connection too, so the next request opens both anew. ssh2
        // emits a channel's protocol error as an event, which must have a listener.
        const drop = () => {
          if (this.session !== session) return
          this.session = undefined
          client.end().catch(() => undefined)
        }
        sftp.on('error', drop)
        sftp.on('close', drop)
        return { client, sftp }
      } catch (error) {
        forget()
        const { hostKey } = this.login
        if (hostKey !== undefined && presented !== undefined && presented !== hostKey)
          throw permanent(new HostKeyMismatchError(this.context.location, presented, hostKey))
        throw loginFailure(refused ?? error, this.context)
      }
    })()
    return session
  }

  private tellUnverified(presented: string): void {
    if (this.toldUnverified) return
    this.toldUnverified = true
    this.logger.warn(
      `${this.context.location}: the server's host key is not verified (no host_key); it presents ` +
        `${presented}: set host_key to that to refuse any other server`,
      { location: this.context.location, host_key: presented },
    )
  }
}
