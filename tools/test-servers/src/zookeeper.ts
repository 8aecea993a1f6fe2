/** A standalone ZooKeeper on 127.0.0.1 for tests, from Debian's zookeeper package. */
import { writeFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { join } from 'node:path'
import { freePorts } from './ports.js'
import { startServer } from './server-process.js'

export interface Zookeeper {
  readonly host: string
  readonly port: number
  /** Holds zoo.cfg, the data and zookeeper.log; removed by stop(). */
  readonly dir: string
  stop(): Promise<void>
}

// Where Debian's libzookeeper-java and libslf4j-java put their jars; the manifest of zookeeper.jar
// names the rest. slf4j-simple gives the server a log (on stderr) instead of none.
const CLASS_PATH = ['/usr/share/java/zookeeper.jar', '/usr/share/java/slf4j-simple.jar'].join(':')
const MAIN_CLASS = 'org.apache.zookeeper.server.ZooKeeperServerMain'
// A test server holds a handful of nodes: a small heap, and a JIT tuned for start-up over throughput.
// Each readiness probe would log a line, and bury the lines that tell why it failed to start.
const JVM_OPTIONS = [
  '-Xmx128m',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper.server.NIOServerCnxn=warn',
]
const HOST = '127.0.0.1'

export async function startZookeeper(): Promise<Zookeeper> {
  const [port] = (await freePorts(1)) as [number]
  const { dir, stop } = await startServer('ZooKeeper', async (dir) => {
    const config = join(dir, 'zoo.cfg')
    await writeFile(config, zooCfg(dir, port))
    return {
      command: 'java',
      args: [...JVM_OPTIONS, '-cp', CLASS_PATH, MAIN_CLASS, config],
      outputFile: join(dir, 'zookeeper.log'),
      logFiles: [],
      readyTimeoutMs: 30_000,
      isReady: () => isServing(port),
    }
  })
  return { host: HOST, port, dir, stop }
}

function zooCfg(dir: string, port: number): string {
  return [
    'tickTime=2000',
    `dataDir=${dir}`,
    `clientPort=${port}`,
    `clientPortAddress=${HOST}`,
    'admin.enableServer=false',
    '4lw.commands.whitelist=srvr',
    '',
  ].join('\n')
}

/** `srvr` tells the version only once the server takes requests. */
async function isServing(port: number): Promise<boolean> {
  return (await fourLetterWord(port, 'srvr')).startsWith('Zookeeper version:')
}

function fourLetterWord(port: number, word: string): Promise<string> {
  return new Promise((resolve) => {
    let answer = ''
    const socket = connect(port, HOST, () => socket.end(word))
    socket.setTimeout(1000, () => socket.destroy())
    socket.on('data', (chunk) => {
      answer += chunk
    })
    socket.on('error', () => {})
    socket.on('close', () => resolve(answer))
  })
}
