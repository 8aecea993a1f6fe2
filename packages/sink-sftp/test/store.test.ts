import { randomBytes } from 'node:crypto'
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout } from 'node:timers/promises'
import { objectStoreSuite } from '@skippr/conformance'
import { hasCode, isPermanent } from '@skippr/connector-api'
import { isPipelineKey, sha256 } from '@skippr/object-sink'
import SftpClient from 'ssh2-sftp-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rootDirectory, sftpLocation, UNAVAILABLE } from '../src/index.js'
import { freshDir, type SshServer, startSshd, storeOn } from './server.js'

let server: SshServer
beforeAll(async () => {
  server = await startSshd()
})
afterAll(() => server?.stop())

objectStoreSuite({
  name: 'sftp (OpenSSH sshd)',
  createStore: async () => storeOn(server, freshDir('contract')),
})

const info = (body: readonly Uint8Array[]) => ({
  sha256: sha256(body),
  contentType: 'text/plain',
  batch: 'p/e/1/0',
})
const bytes = (text: string) => [new TextEncoder().encode(text)]

describe('the server', () => {
  it("refuses the protocol's rename onto an existing file, where posix-rename@openssh.com replaces it", async () => {
    const dir = join(server.sftpRoot, freshDir('rename'))
    await mkdir(dir)
    for (const name of ['a', 'b', 'target']) await writeFile(join(dir, name), name)
    const client = new SftpClient('test', { error: () => {}, end: () => {}, close: () => {} })
    await client.connect({
      host: server.host,
      port: server.port,
      username: server.username,
      privateKey: server.privateKey,
    })
    try {
      await expect(client.rename(join(dir, 'a'), join(dir, 'target'))).rejects.toThrow(/Failure/)
      expect(await readFile(join(dir, 'target'), 'utf8')).toBe('target')
      await client.posixRename(join(dir, 'b'), join(dir, 'target'))
      expect(await readFile(join(dir, 'target'), 'utf8')).toBe('b')
    } finally {
      await client.end()
    }
  })
})

describe('SftpStore', () => {
  it('names its location sftp://user@host:port/path, relative paths under /~/', () => {
    const store = storeOn(server, 'x')
    expect(store.location).toBe(`sftp://${server.username}@${server.host}:${server.port}${server.sftpRoot}/x`)
    expect(storeOn(server, 'x', { root: 'out/raw' }).location).toBe(
      `sftp://${server.username}@${server.host}:${server.port}/~/out/raw`,
    )
    expect(store.createsOnce).toBe(true)
  })

  it('joins path and prefix into one root, and names odd roots, hosts and users unambiguously', () => {
    expect(rootDirectory('/srv/out/', '/raw/skippr/')).toBe('/srv/out/raw/skippr')
    expect(rootDirectory('out', '')).toBe('out')
    expect(rootDirectory('.', '')).toBe('.')
    expect(rootDirectory('/', '')).toBe('/')
    const at = (host: string, username: string, root: string) =>
      sftpLocation({ host, port: 2222, username }, root)
    expect(at('h', 'u', '/')).toBe('sftp://u@h:2222')
    expect(at('h', 'u', '.')).toBe('sftp://u@h:2222/~')
    expect(at('::1', 'me@corp', 'out')).toBe('sftp://me%40corp@[::1]:2222/~/out')
  })

  it('writes a body of many large chunks whole, byte for byte', async () => {
    const store = storeOn(server, freshDir('large'))
    const body = [randomBytes(3_000_001), randomBytes(17), new Uint8Array(0), randomBytes(1_500_000)]
    try {
      expect(await store.create('ns/p/e/big.bin', body, info(body))).toBe('created')
      expect(Buffer.from(await store.read('ns/p/e/big.bin')).equals(Buffer.concat(body))).toBe(true)
      expect(await store.stat('ns/p/e/big.bin')).toEqual({ sha256: sha256(body), bytes: 4_500_018 })
    } finally {
      await store.close()
    }
  })

  it('shows a file under its final name only once whole, and leaves no temporary file behind', async () => {
    const dir = freshDir('tmp')
    const local = join(server.sftpRoot, dir, 'ns/p/e')
    const store = storeOn(server, dir)
    try {
      await store.open(() => true)
      const body = Array.from({ length: 32 }, () => randomBytes(1 << 20))
      let writing = true
      const created = store.create('ns/p/e/x.bin', body, info(body)).finally(() => {
        writing = false
      })
      // Watch the directory on the server's disk while the file is written.
      const seen = new Set<string>()
      while (writing) {
        for (const name of await readdir(local).catch(() => [])) {
          const size = await stat(join(local, name)).then(
            (s) => s.size,
            () => undefined,
          )
          seen.add(name === 'x.bin' ? `x.bin ${size}` : 'temporary')
        }
        await setTimeout(1)
      }
      expect(await created).toBe('created')
      expect([...seen].filter((entry) => entry !== 'temporary' && entry !== `x.bin ${32 << 20}`)).toEqual([])
      expect(seen.has('temporary')).toBe(true)
      await store.create('ns/p/e/x.bin', bytes('other\n'), info(bytes('other\n')))
      expect(await readdir(local)).toEqual(['x.bin'])
    } finally {
      await store.close()
    }
  })

  it('open removes the temporary files of crashed writers for its own keys only; list never shows them', async () => {
    const dir = freshDir('leftovers')
    const root = join(server.sftpRoot, dir)
    const own = [
      'orders/mine/e1/.000000000001-0.jsonl.0123456789abcdef.tmp',
      '_manifests/mine/e1/.000000000001.json.fedcba9876543210.tmp',
    ]
    const others = [
      'orders/theirs/e1/.000000000001-0.jsonl.0123456789abcdef.tmp',
      'orders/.x.jsonl.0123456789abcdef.tmp',
      '.x.0123456789abcdef.tmp',
      'orders/mine/e1/.hidden-by-hand',
    ]
    for (const file of [...own, ...others]) {
      await mkdir(join(root, file, '..'), { recursive: true })
      await writeFile(join(root, file), 'partial')
    }
    await writeFile(join(root, 'orders/mine/e1/000000000000-0.jsonl'), '{}\n')
    const store = storeOn(server, dir)
    try {
      // A dot file made by hand is no temporary file: it is listed, and kept.
      expect(await store.list('orders/')).toEqual([
        'orders/mine/e1/.hidden-by-hand',
        'orders/mine/e1/000000000000-0.jsonl',
      ])
      await store.open((key) => isPipelineKey(key, 'mine'))
      expect(await readdir(join(root, 'orders/mine/e1'))).toEqual(
        ['.hidden-by-hand', '000000000000-0.jsonl'].sort(),
      )
      expect(await readdir(join(root, '_manifests/mine/e1'))).toEqual([])
      expect(await readdir(join(root, 'orders/theirs/e1'))).toHaveLength(1)
      expect(await readdir(join(root, 'orders'))).toEqual(['.x.jsonl.0123456789abcdef.tmp', 'mine', 'theirs'])
      expect(await readdir(root)).toEqual(['.x.0123456789abcdef.tmp', '_manifests', 'orders'])
    } finally {
      await store.close()
    }
  })

  it('creates a directory tree once when writers race for it, and one key once', async () => {
    const dir = freshDir('race')
    const stores = [storeOn(server, dir), storeOn(server, dir), storeOn(server, dir), storeOn(server, dir)]
    try {
      const distinct = await Promise.all(
        stores.map((store, i) => store.create(`a/b/c/d/${i}.txt`, bytes(`${i}\n`), info(bytes(`${i}\n`)))),
      )
      expect(distinct).toEqual(['created', 'created', 'created', 'created'])
      const same = await Promise.all(
        stores.map((store, i) => store.create('a/b/same.txt', bytes(`${i}\n`), info(bytes(`${i}\n`)))),
      )
      expect(same.filter((result) => result === 'created')).toHaveLength(1)
      expect(await stores[0]!.list('a/')).toEqual(
        [...[0, 1, 2, 3].map((i) => `a/b/c/d/${i}.txt`), 'a/b/same.txt'].sort(),
      )
    } finally {
      for (const store of stores) await store.close()
    }
  })

  it('connects again after the connection was dropped', async () => {
    const store = storeOn(server, freshDir('drop'))
    try {
      await store.open(() => true)
      await killSessions(server)
      const first = await store.list('').then(
        () => undefined,
        (error: unknown) => error,
      )
      // The drop may be noticed before the request or during it: then the request fails, retried.
      if (first !== undefined) {
        expect(hasCode(first, UNAVAILABLE)).toBe(true)
        expect(isPermanent(first)).toBe(false)
      }
      expect(await store.create('k/x', bytes('x'), info(bytes('x')))).toBe('created')
      expect(await store.list('')).toEqual(['k/x'])
    } finally {
      await store.close()
    }
  })
})

/** Kills the sshd processes serving the open sessions (the listener's children), as a network drop would. */
async function killSessions(ssh: SshServer): Promise<void> {
  const listener = (await readFile(join(ssh.dir, 'sshd.pid'), 'utf8')).trim()
  const children = (await readFile(`/proc/${listener}/task/${listener}/children`, 'utf8')).trim().split(/\s+/)
  expect(children.filter(Boolean).length).toBeGreaterThan(0)
  for (const pid of children.filter(Boolean)) process.kill(Number(pid), 'SIGKILL')
}
