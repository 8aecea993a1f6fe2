import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import SftpClient from 'ssh2-sftp-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type SshServer, startSshd } from '../src/index.js'
import { descendants } from '../src/process-tree.js'
import { isRunning, refusesConnections } from './processes.js'

// The client logs every end and close to the console unless given listeners of its own.
const quietClient = () => new SftpClient('test', { end: () => {}, close: () => {}, error: () => {} })

describe('sshd', () => {
  let sshd: SshServer
  beforeAll(async () => {
    sshd = await startSshd()
  }, 60_000)
  afterAll(async () => {
    await sshd?.stop()
  })

  /** An SFTP client logged in as the server's user, which checks the server's host key. */
  async function connect(): Promise<SftpClient> {
    const client = quietClient()
    const hostKey = Buffer.from(sshd.hostPublicKey.split(' ')[1]!, 'base64')
    await client.connect({
      host: sshd.host,
      port: sshd.port,
      username: sshd.username,
      privateKey: sshd.privateKey,
      hostVerifier: (key: Buffer) => key.equals(hostKey),
    })
    return client
  }

  it('writes, lists and reads files under sftpRoot over SFTP with the key', async () => {
    const client = await connect()
    try {
      await client.mkdir(join(sshd.sftpRoot, 'out'))
      await client.put(Buffer.from('{"n":1}'), join(sshd.sftpRoot, 'out', 'part-0.json'))
      expect((await client.list(join(sshd.sftpRoot, 'out'))).map((entry) => entry.name)).toEqual([
        'part-0.json',
      ])
      expect(String(await client.get(join(sshd.sftpRoot, 'out', 'part-0.json')))).toBe('{"n":1}')
    } finally {
      await client.end()
    }
    expect(await readFile(join(sshd.sftpRoot, 'out', 'part-0.json'), 'utf8')).toBe('{"n":1}')
  })

  it('refuses another key and any password', async () => {
    const otherKeyDir = await mkdtemp(join(tmpdir(), 'skippr-sshd-test-'))
    try {
      const otherKey = join(otherKeyDir, 'key')
      await promisify(execFile)('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', otherKey])
      const login = { host: sshd.host, port: sshd.port, username: sshd.username, retries: 0 }
      await expect(quietClient().connect({ ...login, privateKey: await readFile(otherKey) })).rejects.toThrow(
        /authentication/i,
      )
      await expect(quietClient().connect({ ...login, password: 'any' })).rejects.toThrow(/authentication/i)
    } finally {
      await rm(otherKeyDir, { recursive: true, force: true })
    }
  })

  it('ends open sessions and leaves no process, port or dir behind after stop', async () => {
    const client = await connect()
    const listener = Number(await readFile(join(sshd.dir, 'sshd.pid'), 'utf8'))
    const sessions = await descendants(listener)
    expect(sessions.length).toBeGreaterThan(0)
    const clientClosed = new Promise<void>((resolve) => client.on('close', resolve))
    await sshd.stop()
    expect([listener, ...sessions].filter(isRunning)).toEqual([])
    expect(await refusesConnections(sshd.port)).toBe(true)
    expect(existsSync(sshd.dir)).toBe(false)
    await clientClosed
    await sshd.stop()
  })
})
