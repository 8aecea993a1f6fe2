/** Free TCP ports on 127.0.0.1, chosen by the OS. */
import { createServer, type Server } from 'node:net'

/**
 * `count` distinct free ports. All are held open until every one is chosen, so the OS cannot hand
 * the same port out twice; a server started right after binds them before anyone else is likely to.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = []
  try {
    for (let i = 0; i < count; i++) servers.push(await listenOnAnyPort())
    return servers.map((server) => {
      const address = server.address()
      if (address === null || typeof address === 'string') throw new Error('a TCP listener has no port')
      return address.port
    })
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
  }
}

function listenOnAnyPort(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve(server))
  })
}
