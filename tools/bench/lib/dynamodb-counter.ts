/**
 * A counting HTTP proxy in front of a DynamoDB endpoint (dynalite here): it forwards every request
 * unchanged and counts them by operation, the `X-Amz-Target` header's (`DynamoDB_20120810.PutItem`
 * → `PutItem`), and each request on one item by operation and the item's sort key too (`Item.SK` of
 * a PutItem, `Key.SK` of a GetItem, UpdateItem or DeleteItem), so a bench can say which state
 * records a sync reads and writes, and how often.
 * The signature covers the Host header, which the proxy passes on as it came: this works only with
 * a server that checks no signatures, as dynalite.
 */
import { once } from 'node:events'
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http'
import { freePorts } from '@skippr/test-servers'

/** The operations that change an item. */
export const WRITE_OPERATIONS = ['PutItem', 'UpdateItem', 'DeleteItem'] as const
const ITEM_OPERATIONS: readonly string[] = ['GetItem', ...WRITE_OPERATIONS]

export interface DynamoDbCounter {
  /** Where clients send their requests instead of the server: `http://127.0.0.1:<port>`. */
  readonly endpoint: string
  /** Requests per operation since the last reset. */
  operations(): ReadonlyMap<string, number>
  /** Requests on one item since the last reset, by operation and sort key: `PutItem state/resume`. */
  itemRequests(): ReadonlyMap<string, number>
  reset(): void
  stop(): Promise<void>
}

interface DynamoDbRequest {
  readonly Item?: { readonly SK?: { readonly S?: string } }
  readonly Key?: { readonly SK?: { readonly S?: string } }
}

export async function startDynamoDbCounter(target: string): Promise<DynamoDbCounter> {
  const upstream = new URL(target)
  const agent = new Agent({ keepAlive: true })
  const operations = new Map<string, number>()
  const items = new Map<string, number>()
  const add = (counts: Map<string, number>, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1)

  const forward = async (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const chunks: Buffer[] = []
    for await (const chunk of incoming) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    const operation =
      String(incoming.headers['x-amz-target'] ?? '')
        .split('.')
        .pop() || 'none'
    add(operations, operation)
    if (ITEM_OPERATIONS.includes(operation)) add(items, `${operation} ${sortKey(body)}`)
    const proxied = request({
      host: upstream.hostname,
      port: upstream.port,
      method: incoming.method,
      path: incoming.url,
      headers: incoming.headers,
      agent,
    })
    proxied.on('response', (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
      answer.pipe(outgoing)
    })
    proxied.on('error', () => outgoing.destroy())
    proxied.end(body)
  }
  const server = createServer((incoming, outgoing) => {
    forward(incoming, outgoing).catch(() => outgoing.destroy())
  })
  const [port] = (await freePorts(1)) as [number]
  server.listen(port, '127.0.0.1')
  await once(server, 'listening')
  let stopped: Promise<void> | undefined
  return {
    endpoint: `http://127.0.0.1:${port}`,
    operations: () => new Map(operations),
    itemRequests: () => new Map(items),
    reset() {
      operations.clear()
      items.clear()
    },
    stop() {
      stopped ??= new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
        agent.destroy()
      })
      return stopped
    },
  }
}

function sortKey(body: Buffer): string {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as DynamoDbRequest
    return parsed.Item?.SK?.S ?? parsed.Key?.SK?.S ?? '(no SK)'
  } catch {
    return '(not JSON)'
  }
}
