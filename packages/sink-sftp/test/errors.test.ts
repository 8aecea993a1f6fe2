import { execFile } from 'node:child_process'
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { Logger } from '@skippr/connector-api'
import { CONFIG_INVALID, hasCode, isPermanent, parseConnectorConfig } from '@skippr/connector-api'
import { sha256 } from '@skippr/object-sink'
import { freePorts } from '@skippr/test-servers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SftpSinkOptions, SftpStoreOptions } from '../src/index.js'
import {
  AUTHENTICATION_FAILED,
  sink as definition,
  HOST_KEY_MISMATCH,
  KEY_UNUSABLE,
  NOT_A_DIRECTORY,
  PERMISSION_DENIED,
  SftpStore,
  UNAVAILABLE,
} from '../src/index.js'
import {
  freshDir,
  loginConfig,
  type SshServer,
  serverFingerprint,
  sinkFrom,
  startSshd,
  storeOn,
} from './server.js'

const execFileAsync = promisify(execFile)
const PASSWORD = 'Tr0ub4dor-and-3-secret'

let server: SshServer
let keys: string
beforeAll(async () => {
  server = await startSshd()
  keys = await mkdtemp(join(tmpdir(), 'skippr-sftp-keys-'))
})
afterAll(async () => {
  await server?.stop()
  await rm(keys, { recursive: true, force: true })
})

interface Expected {
  readonly code: string
  readonly permanent: boolean
  /** Parts the message must hold. */
  readonly says: readonly (string | RegExp)[]
  /** What it must never hold. */
  readonly secrets?: readonly string[]
}

/** The error is one line with its code and classification, saying what and where, without a secret. */
function expectFailure(error: unknown, expected: Expected): void {
  expect(error).toBeInstanceOf(Error)
  const { message } = error as Error
  expect({ code: (error as { code?: unknown }).code, permanent: isPermanent(error), message }).toMatchObject({
    code: expected.code,
    permanent: expected.permanent,
  })
  expect(message).not.toContain('\n')
  for (const part of expected.says) expect(message).toMatch(part)
  for (const secret of expected.secrets ?? []) expect(message).not.toContain(secret)
}

async function failureOf(run: () => Promise<unknown>): Promise<unknown> {
  return run().then(
    () => {
      throw new Error('expected a failure')
    },
    (error: unknown) => error,
  )
}

/** Opens a store (with one write) and closes it; resolves to what failed. */
async function openFailure(store: SftpStore): Promise<unknown> {
  try {
    return await failureOf(() => store.open(() => true))
  } finally {
    await store.close()
  }
}

/** A body line of a private key: what a leaked key would show. */
const keyLine = (key: string) => key.split('\n')[2]!

describe('bad config: one line naming the field', () => {
  const parse = (raw: Partial<SftpSinkOptions> & Record<string, unknown>) => {
    try {
      parseConnectorConfig(definition, raw, { file: 'skippr.yml', path: 'data_sinks.out.Sftp' })
    } catch (error) {
      expect(hasCode(error, CONFIG_INVALID)).toBe(true)
      expect((error as Error).message).not.toContain('\n')
      return (error as Error).message
    }
    throw new Error('expected a config error')
  }
  const base = { host: 'sftp.example.com', username: 'u', path: 'out', format: 'jsonl' } as const

  it('a password and a key, or neither', () => {
    expect(parse({ ...base, password: PASSWORD, private_key: 'k' })).toBe(
      'skippr.yml: data_sinks.out.Sftp.private_key: give exactly one of password and private_key',
    )
    expect(parse(base)).toBe(
      'skippr.yml: data_sinks.out.Sftp.password: give exactly one of password and private_key',
    )
    expect(parse({ ...base, password: PASSWORD, passphrase: 'p' })).toMatch(
      /Sftp\.passphrase: a passphrase belongs to a private_key/,
    )
  })

  it('a host key that is no SHA256 fingerprint, a ~ path, an unknown field', () => {
    expect(parse({ ...base, password: PASSWORD, host_key: 'ssh-ed25519 AAAAC3Nz' })).toMatch(
      /Sftp\.host_key: expected a fingerprint as ssh-keygen -lf prints it/,
    )
    expect(parse({ ...base, password: PASSWORD, path: '~/out' })).toMatch(
      /Sftp\.path: .*\(data, not ~\/data\)/,
    )
    expect(parse({ ...base, password: PASSWORD, bucket: 'b' })).toMatch(/unknown key bucket/)
  })

  it('defaults: port 22, no prefix, no compression, no manifest', () => {
    const config = parseConnectorConfig(definition, { ...base, password: PASSWORD }, { file: 'f', path: 'p' })
    expect(config).toMatchObject({ port: 22, prefix: '', compression: 'none', manifest: false })
  })
})

describe('login', () => {
  const location = () => `sftp://${server.username}@${server.host}:${server.port}${server.sftpRoot}`

  it('a wrong password is permanent: authentication failed', async () => {
    const store = storeOn(server, 'x', { privateKey: undefined, password: PASSWORD })
    expectFailure(await openFailure(store), {
      code: AUTHENTICATION_FAILED,
      permanent: true,
      says: [
        `the SFTP server of ${location()}/x refused the login of user ${server.username} by password`,
        /check the sink's username and password/,
      ],
      secrets: [PASSWORD],
    })
  })

  it('a key the server does not know is permanent: authentication failed', async () => {
    await execFileAsync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(keys, 'other')])
    const other = await readFile(join(keys, 'other'), 'utf8')
    expectFailure(await openFailure(storeOn(server, 'x', { privateKey: other })), {
      code: AUTHENTICATION_FAILED,
      permanent: true,
      says: [
        `refused the login of user ${server.username} by key`,
        /check the sink's username and private_key/,
      ],
      secrets: [keyLine(other)],
    })
  })

  it('a private_key that is no key is permanent: key unusable', async () => {
    expectFailure(await openFailure(storeOn(server, 'x', { privateKey: 'not-a-key-but-secret' })), {
      code: KEY_UNUSABLE,
      permanent: true,
      says: [`the sink's private_key for ${location()}/x cannot be used`],
      secrets: ['not-a-key-but-secret'],
    })
  })

  it('an encrypted key needs its passphrase: without it, or with a wrong one, it is unusable', async () => {
    // The server's client key, encrypted.
    await writeFile(join(keys, 'locked'), server.privateKey, { mode: 0o600 })
    await execFileAsync('ssh-keygen', ['-q', '-p', '-N', PASSWORD, '-f', join(keys, 'locked')])
    const locked = await readFile(join(keys, 'locked'), 'utf8')
    for (const passphrase of [undefined, 'not-the-passphrase']) {
      expectFailure(await openFailure(storeOn(server, 'x', { privateKey: locked, passphrase })), {
        code: KEY_UNUSABLE,
        permanent: true,
        says: [/passphrase|decrypt/],
        secrets: [keyLine(locked), PASSWORD, 'not-the-passphrase'],
      })
    }
    const unlocked = storeOn(server, freshDir('locked'), { privateKey: locked, passphrase: PASSWORD })
    try {
      await unlocked.open(() => true)
    } finally {
      await unlocked.close()
    }
  })

  it('a closed port is retried, one line naming the location', async () => {
    const [port] = (await freePorts(1)) as [number]
    const store = storeOn(server, 'x', { port })
    expectFailure(await openFailure(store), {
      code: UNAVAILABLE,
      permanent: false,
      says: [
        `cannot reach the SFTP server of sftp://${server.username}@${server.host}:${port}${server.sftpRoot}/x`,
        /ECONNREFUSED/,
        /retried/,
      ],
    })
  })

  it('another host key than host_key is permanent, naming both fingerprints; the right one connects', async () => {
    const presented = await serverFingerprint(server)
    const wrong = `SHA256:${'A'.repeat(43)}`
    expectFailure(await openFailure(storeOn(server, 'x', { hostKey: wrong })), {
      code: HOST_KEY_MISMATCH,
      permanent: true,
      says: [
        `the SFTP server of ${location()}/x presented host key ${presented}, not the configured host_key ${wrong}`,
      ],
    })
    const pinned = storeOn(server, freshDir('pinned'), { hostKey: presented })
    try {
      await pinned.open(() => true)
    } finally {
      await pinned.close()
    }
  })

  it('without host_key it warns once, with the fingerprint to pin and no secret', async () => {
    const warnings: { message: string; fields: unknown }[] = []
    const logger: Logger = {
      debug() {},
      info() {},
      warn: (message, fields) => warnings.push({ message, fields }),
      error() {},
    }
    const options: SftpStoreOptions = {
      host: server.host,
      port: server.port,
      username: server.username,
      privateKey: server.privateKey,
      root: join(server.sftpRoot, freshDir('warn')),
    }
    const store = new SftpStore(options, logger)
    try {
      await store.open(() => true)
      await store.list('')
    } finally {
      await store.close()
    }
    expect(warnings).toHaveLength(1)
    expect(warnings[0]!.message).toContain(
      `the server's host key is not verified (no host_key); it presents ${await serverFingerprint(server)}`,
    )
    expect(JSON.stringify(warnings)).not.toContain(keyLine(server.privateKey))
  })
})

describe('the path', () => {
  it('a path below a regular file cannot be created: permanent, naming the file', async () => {
    const dir = freshDir('file')
    await mkdir(join(server.sftpRoot, dir))
    await writeFile(join(server.sftpRoot, dir, 'plain'), 'a file')
    const store = storeOn(server, `${dir}/plain/out/more`)
    expectFailure(await openFailure(store), {
      code: NOT_A_DIRECTORY,
      permanent: true,
      says: [
        `sftp://${server.username}@${server.host}:${server.port}${server.sftpRoot}/${dir}/plain exists on the SFTP server and is not a directory`,
      ],
    })
  })

  // The test sshd runs as the user running the tests, often root, who ignores file modes: a
  // directory made immutable (chattr +i) refuses even root, as EPERM, which OpenSSH reports as
  // permission denied like it does EACCES.
  it('a read-only directory is permanent: permission denied, at open and at a write', async () => {
    const dir = freshDir('readonly')
    const path = join(server.sftpRoot, dir)
    await mkdir(path)
    await makeReadOnly(path)
    try {
      const store = storeOn(server, dir)
      expectFailure(await openFailure(store), {
        code: PERMISSION_DENIED,
        permanent: true,
        says: [
          `the SFTP server denied user ${server.username} permission to write to sftp://${server.username}@${server.host}:${server.port}${path}: Permission denied`,
        ],
      })
      const body = [new TextEncoder().encode('x\n')]
      const writer = storeOn(server, dir)
      try {
        const failure = await failureOf(() =>
          writer.create('ns/p/e/x.jsonl', body, { sha256: sha256(body), contentType: 'x', batch: 'b' }),
        )
        expectFailure(failure, {
          code: PERMISSION_DENIED,
          permanent: true,
          says: [`to create sftp://${server.username}@${server.host}:${server.port}${path}/ns/p/e/x.jsonl`],
        })
      } finally {
        await writer.close()
      }
      const sink = await sinkFrom(loginConfig(server, dir))
      try {
        const failure = await failureOf(() => sink.prepare({ namespace: 'ns', fields: [] }))
        expectFailure(failure, {
          code: PERMISSION_DENIED,
          permanent: true,
          says: [],
          secrets: [keyLine(server.privateKey)],
        })
      } finally {
        await sink.close()
      }
    } finally {
      await makeWritable(path)
    }
  })
})

async function makeReadOnly(path: string): Promise<void> {
  if (process.getuid?.() === 0) await execFileAsync('chattr', ['+i', path])
  else await chmod(path, 0o555)
}

async function makeWritable(path: string): Promise<void> {
  if (process.getuid?.() === 0) await execFileAsync('chattr', ['-i', path])
  else await chmod(path, 0o755)
}
