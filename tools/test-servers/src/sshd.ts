/** An SSH/SFTP server on 127.0.0.1 for tests: Debian's OpenSSH sshd with a config and keys of its own. */
import { execFile } from 'node:child_process'
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { userInfo } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePorts } from './ports.js'
import { greetsWith } from './probes.js'
import { descendants, terminate } from './process-tree.js'
import { startServer } from './server-process.js'

export interface SshServer {
  readonly host: string
  readonly port: number
  /** The user running the tests: the only one allowed in, by key only. */
  readonly username: string
  /** The client's ed25519 private key, OpenSSH format, unencrypted. */
  readonly privateKey: string
  /** The server's ed25519 public key, `ssh-ed25519 AAAA… host`, for clients that verify the host. */
  readonly hostPublicKey: string
  /** An empty directory for the test's files: an absolute path, as SFTP sessions start in the user's home. */
  readonly sftpRoot: string
  /** Holds the config, the keys, `sshd.log` and `sftpRoot`; removed by stop(). */
  readonly dir: string
  /** Ends open sessions too (sshd leaves them running when only the listener stops). */
  stop(): Promise<void>
}

const HOST = '127.0.0.1'
// sshd re-executes itself by the path it was started with, so it must be absolute.
const SSHD = '/usr/sbin/sshd'
// Compiled into sshd: as root it chroots its unprivileged children there and refuses to start
// without it. Debian's ssh service makes it at every start; a machine that never ran it lacks it.
const PRIVSEP_DIR = '/run/sshd'
const execFileAsync = promisify(execFile)

/**
 * Starts sshd with its own host key and a client key pair that logs in as the current user, with
 * SFTP (internal-sftp). Password login is off: it would need a system password for the user.
 */
export async function startSshd(): Promise<SshServer> {
  assertSshdInstalled()
  if (process.getuid?.() === 0 && !existsSync(PRIVSEP_DIR)) mkdirSync(PRIVSEP_DIR, { mode: 0o755 })
  const [port] = (await freePorts(1)) as [number]
  const username = userInfo().username
  const server = await startServer('sshd', async (dir) => {
    await mkdir(join(dir, 'files'))
    await generateKey(join(dir, 'host_ed25519'), 'host')
    await generateKey(join(dir, 'client_ed25519'), username)
    await writeFile(join(dir, 'authorized_keys'), await readFile(join(dir, 'client_ed25519.pub')))
    await writeFile(join(dir, 'sshd_config'), sshdConfig(dir, port, username))
    return {
      command: SSHD,
      args: ['-D', '-e', '-f', join(dir, 'sshd_config')],
      outputFile: join(dir, 'sshd.log'),
      logFiles: [],
      readyTimeoutMs: 30_000,
      isReady: () => greetsWith(HOST, port, 'SSH-2.0-'),
    }
  })
  const { dir } = server
  return {
    host: HOST,
    port,
    username,
    privateKey: await readFile(join(dir, 'client_ed25519'), 'utf8'),
    hostPublicKey: (await readFile(join(dir, 'host_ed25519.pub'), 'utf8')).trim(),
    sftpRoot: join(dir, 'files'),
    dir,
    async stop() {
      const listener = await listenerPid(dir)
      if (listener !== undefined) await terminate(await descendants(listener))
      await server.stop()
    },
  }
}

function assertSshdInstalled(): void {
  try {
    accessSync(SSHD, constants.X_OK)
  } catch {
    throw new Error(
      `sshd: ${SSHD} is missing; install Debian's openssh-server (tools/test-servers/install.sh does that)`,
    )
  }
}

/** An ed25519 key pair without passphrase: `file` (private, mode 0600, as sshd demands) and `file.pub`. */
async function generateKey(file: string, comment: string): Promise<void> {
  await execFileAsync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file], {
    timeout: 10_000,
  })
}

/** The pid in sshd's PidFile, if that process is still this server's listener (not a reused pid). */
async function listenerPid(dir: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(join(dir, 'sshd.pid'), 'utf8')).trim())
    // sshd rewrites its command line to `sshd: /usr/sbin/sshd -D -e -f <config> [listener] …`.
    const commandLine = await readFile(`/proc/${pid}/cmdline`, 'utf8')
    return commandLine.includes(join(dir, 'sshd_config')) ? pid : undefined
  } catch {
    return undefined
  }
}

function sshdConfig(dir: string, port: number, username: string): string {
  const path = (name: string) => `"${join(dir, name)}"`
  return [
    `ListenAddress ${HOST}`,
    `Port ${port}`,
    `HostKey ${path('host_ed25519')}`,
    `PidFile ${path('sshd.pid')}`,
    `AuthorizedKeysFile ${path('authorized_keys')}`,
    // The keys live in a temp dir below a world-writable one, which strict modes refuse.
    'StrictModes no',
    'UsePAM no',
    `AllowUsers ${username}`,
    'AuthenticationMethods publickey',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    // When the tests run as root, the user is root: key login only, sshd's default for root anyway.
    'PermitRootLogin prohibit-password',
    'DisableForwarding yes',
    'Subsystem sftp internal-sftp',
    '',
  ].join('\n')
}
