/**
 * One Snowflake session through `snowflake-sdk`: login (password or key pair), statements as
 * promises of rows, and nothing written to disk by the driver (its log goes nowhere: left alone it
 * writes snowflake.log into the working directory).
 */
import snowflake from 'snowflake-sdk'
import type { SnowflakeSinkConfig } from './config.js'
import { SNOWFLAKE_REFUSED, SnowflakeError } from './errors.js'

const silent = { error() {}, warn() {}, info() {}, debug() {}, trace() {} }
let driverConfigured = false

function configureDriver(): void {
  if (driverConfigured) return
  snowflake.configure({ logLevel: 'OFF', customLogger: silent })
  driverConfigured = true
}

export type Row = Record<string, unknown>

export class Session {
  private constructor(private readonly connection: snowflake.Connection) {}

  /** A session logged in, on UTC (dates widened to timestamps are midnight UTC, as elsewhere). */
  static async open(config: SnowflakeSinkConfig): Promise<Session> {
    configureDriver()
    const credentials =
      config.private_key !== undefined
        ? {
            authenticator: 'SNOWFLAKE_JWT',
            privateKey: config.private_key,
            ...(config.private_key_passphrase ? { privateKeyPass: config.private_key_passphrase } : {}),
          }
        : { password: config.password }
    const connection = snowflake.createConnection({
      account: config.account,
      username: config.username,
      ...credentials,
      warehouse: config.warehouse,
      database: config.database,
      schema: config.schema,
      ...(config.role ? { role: config.role } : {}),
      ...(config.access_url ? { accessUrl: config.access_url.replace(/\/+$/, '') } : {}),
      application: 'skippr',
      // One login attempt: the runner's retry loop owns the retrying, within skipprd's retry
      // budget (the driver's default, 7 tries with backoff, outlasts a short budget). A
      // statement's transport retries stay the driver's: it offers no setting for them.
      sfRetryMaxLoginRetries: 0,
    })
    await new Promise<void>((resolve, reject) => {
      connection.connect((error) => (error ? reject(error) : resolve()))
    })
    // connect() can end without an error and without a session: a login that never happened.
    if (!connection.isUp())
      throw new SnowflakeError(SNOWFLAKE_REFUSED, 'Snowflake login: no session was opened', 'login', false)
    const session = new Session(connection)
    await session.run("ALTER SESSION SET TIMEZONE = 'UTC'")
    return session
  }

  /** Runs one statement; `binds` fill its `?` placeholders. */
  run(sqlText: string, binds: readonly (string | null)[] = []): Promise<Row[]> {
    return new Promise((resolve, reject) => {
      this.connection.execute({
        sqlText,
        binds: binds as snowflake.Binds,
        complete: (error, _statement, rows) => (error ? reject(error) : resolve((rows ?? []) as Row[])),
      })
    })
  }

  isUp(): boolean {
    return this.connection.isUp()
  }

  async close(): Promise<void> {
    if (!this.connection.isUp()) return
    await new Promise<void>((resolve) => {
      this.connection.destroy(() => resolve())
    })
  }
}
