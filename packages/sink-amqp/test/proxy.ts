/** A TCP proxy on 127.0.0.1 in front of the broker, whose connections a test can cut. */
import { connect, createServer, type Server, type Socket } from 'node:net'

export class CuttingProxy {
  private constructor(
    private readonly server: Server,
    private readonly sockets: Set<Socket>,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<CuttingProxy> {
    const sockets = new Set<Socket>()
    const server = createServer((client) => {
      const upstream = connect(target.port, target.host)
      for (const socket of [client, upstream]) {
        sockets.add(socket)
        socket.on('error', () => {})
        socket.on('close', () => sockets.delete(socket))
      }
      client.pipe(upstream).pipe(client)
      client.on('close', () => upstream.destroy())
      upstream.on('close', () => client.destroy())
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const address = server.address()
    if (address === null || typeof address === 'string') throw new Error('the proxy has no port')
    return new CuttingProxy(server, sockets, address.port)
  }

  /** Resets every connection passing through now, as a lost network would. */
  cut(): void {
    for (const socket of this.sockets) socket.resetAndDestroy()
  }

  async stop(): Promise<void> {
    this.cut()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}
