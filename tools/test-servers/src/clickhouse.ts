/** A ClickHouse server on 127.0.0.1 for tests, with its own config, users and temp dir. */
import { randomBytes } from 'node:crypto'
import { accessSync, constants } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { basename, delimiter, join } from 'node:path'
import { freePorts } from './ports.js'
import { startServer } from './server-process.js'

export interface ClickhouseOptions {
  /** Makes replicated tables work: the server's `<zookeeper>` and `{shard}`/`{replica}` macros. */
  zookeeper?: { host: string; port: number }
  /** The `skippr_test` user's password; a random one if not given. */
  password?: string
}

export interface Clickhouse {
  /** The HTTP interface, e.g. `http://127.0.0.1:41234`. */
  readonly url: string
  readonly httpPort: number
  /** The native protocol, for clickhouse-client. */
  readonly tcpPort: number
  /** `skippr_test`; the passwordless `default` user exists as well. */
  readonly user: string
  readonly password: string
  /** Holds the config, the data and the logs; removed by stop(). */
  readonly dir: string
  /** Runs `sql` (with any inline data after it) as `user` over HTTP; throws the server's message. */
  query(sql: string): Promise<string>
  stop(): Promise<void>
}

const HOST = '127.0.0.1'
const USER = 'skippr_test'
// On SIGTERM the server waits about 8 s for an idle keep-alive connection before it exits.
const CLOSE = { connection: 'close' }

export async function startClickhouse(options: ClickhouseOptions = {}): Promise<Clickhouse> {
  const [httpPort, tcpPort, interserverPort] = (await freePorts(3)) as [number, number, number]
  const password = options.password ?? randomBytes(12).toString('hex')
  const url = `http://${HOST}:${httpPort}`
  const { dir, stop } = await startServer('ClickHouse', async (dir) => {
    const ports = { http: httpPort, tcp: tcpPort, interserver: interserverPort }
    await writeFile(join(dir, 'config.xml'), configXml(dir, ports, options.zookeeper))
    await writeFile(join(dir, 'users.xml'), usersXml(password))
    const [command, ...args] = serverCommand()
    return {
      command: command!,
      args: [...args, `--config-file=${join(dir, 'config.xml')}`],
      outputFile: join(dir, 'stderr.log'),
      logFiles: [join(dir, 'log', 'error.log')],
      readyTimeoutMs: 30_000,
      isReady: () => answersPing(url),
    }
  })
  const authorization = `Basic ${Buffer.from(`${USER}:${password}`).toString('base64')}`
  return {
    url,
    httpPort,
    tcpPort,
    user: USER,
    password,
    dir,
    async query(sql) {
      const response = await fetch(url, { method: 'POST', body: sql, headers: { ...CLOSE, authorization } })
      const text = await response.text()
      if (!response.ok) throw new Error(`ClickHouse answered ${response.status}: ${text.trim()}`)
      return text
    },
    stop,
  }
}

/** Debian installs the server in /usr/sbin, which a non-root PATH lacks; newer builds ship one `clickhouse`. */
function serverCommand(): string[] {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/sbin']
  for (const [name, ...args] of [['clickhouse-server'], ['clickhouse', 'server']] as const) {
    const found = dirs.map((dir) => join(dir, name)).find(isExecutable)
    if (found) return [found, ...args]
  }
  throw new Error('ClickHouse: no clickhouse-server (or clickhouse) on PATH or in /usr/sbin')
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false
  }
}

async function answersPing(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/ping`, { headers: CLOSE })
    return (await response.text()).trim() === 'Ok.'
  } catch {
    return false
  }
}

function configXml(
  dir: string,
  ports: { http: number; tcp: number; interserver: number },
  zookeeper: ClickhouseOptions['zookeeper'],
): string {
  const path = (sub: string) => xml(`${join(dir, sub)}/`)
  const replication = zookeeper
    ? `
  <!-- A replica name of its own, so that servers sharing one ZooKeeper are replicas of a table. -->
  <zookeeper><node><host>${xml(zookeeper.host)}</host><port>${zookeeper.port}</port></node></zookeeper>
  <macros><shard>1</shard><replica>${xml(basename(dir))}</replica></macros>`
    : ''
  return `<?xml version="1.0"?>
<yandex>
  <logger>
    <level>information</level>
    <log>${xml(join(dir, 'log', 'server.log'))}</log>
    <errorlog>${xml(join(dir, 'log', 'error.log'))}</errorlog>
  </logger>
  <listen_host>${HOST}</listen_host>
  <http_port>${ports.http}</http_port>
  <tcp_port>${ports.tcp}</tcp_port>
  <!-- Replicas fetch parts from each other at the host and port they announce here. -->
  <interserver_http_host>${HOST}</interserver_http_host>
  <interserver_http_port>${ports.interserver}</interserver_http_port>
  <path>${path('data')}</path>
  <tmp_path>${path('tmp')}</tmp_path>
  <user_files_path>${path('user_files')}</user_files_path>
  <format_schema_path>${path('format_schemas')}</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>${replication}
</yandex>
`
}

function usersXml(password: string): string {
  const user = (name: string, secret: string) =>
    `<${name}><password>${xml(secret)}</password><networks><ip>${HOST}</ip></networks><profile>default</profile><quota>default</quota></${name}>`
  return `<?xml version="1.0"?>
<yandex>
  <profiles><default><background_pool_size>4</background_pool_size></default></profiles>
  <users>
    ${user('default', '')}
    ${user(USER, password)}
  </users>
  <quotas><default/></quotas>
</yandex>
`
}

const xml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;')
