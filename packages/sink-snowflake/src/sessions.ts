/**
 * The sink's sessions: one per write in flight (a Snowflake transaction is its session's, so two
 * writes at once need two), kept for the next write once done, and logged in as needed.
 */
import type { Session } from './client.js'

export class Sessions {
  private readonly idle: Session[] = []
  private readonly lent = new Set<Session>()

  constructor(private readonly login: () => Promise<Session>) {}

  /** An idle session that is still up, else a new one. */
  async take(): Promise<Session> {
    for (let session = this.idle.pop(); session; session = this.idle.pop()) {
      if (session.isUp()) {
        this.lent.add(session)
        return session
      }
      await session.close().catch(() => {})
    }
    const session = await this.login()
    this.lent.add(session)
    return session
  }

  /** Back for the next taker; a session whose work failed is logged out (it may be broken). */
  give(session: Session, healthy: boolean): void {
    this.lent.delete(session)
    if (healthy && session.isUp()) this.idle.push(session)
    else session.close().catch(() => {})
  }

  async closeAll(): Promise<void> {
    const all = [...this.idle, ...this.lent]
    this.idle.length = 0
    this.lent.clear()
    await Promise.all(all.map((session) => session.close().catch(() => {})))
  }
}
