/**
 * The SFTP requests the store makes, as promises over ssh2's raw channel. The wrapper's own
 * methods rename errors and fold status codes together (a mkdir FAILURE becomes "permission
 * denied"); here an error keeps the server's status code (`statusOf`), which the store decides by.
 */
import type SftpClient from 'ssh2-sftp-client'

/** An open SFTP channel (ssh2's `SFTPWrapper`, named through the wrapper, whose types depend on it). */
export type Sftp = Awaited<ReturnType<SftpClient['connect']>>
/** A file's attributes as the server reports them. */
export type Stats = Parameters<Parameters<Sftp['fstat']>[1]>[1]
/** One directory entry with its attributes. */
export type DirectoryEntry = Parameters<Parameters<Sftp['readdir']>[1]>[1][number]

/** SFTP v3 status codes (draft-ietf-secsh-filexfer-02), as ssh2 puts them in `error.code`. */
export const Status = { noSuchFile: 2, permissionDenied: 3 } as const

/** The SFTP status code of a refused request; undefined for an error that is not one (a lost connection). */
export function statusOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code
  return typeof code === 'number' ? code : undefined
}

type Done<T> = (error: Error | null | undefined, value: T) => void

// ssh2 throws some refusals synchronously (an extension the server lacks); inside the executor
// they become a rejection like any other.
function request<T>(send: (done: Done<T>) => void): Promise<T> {
  return new Promise((resolve, reject) => send((error, value) => (error ? reject(error) : resolve(value))))
}

export const stat = (sftp: Sftp, path: string): Promise<Stats> =>
  request<Stats>((done) => sftp.stat(path, done))
export const fstat = (sftp: Sftp, handle: Buffer): Promise<Stats> =>
  request<Stats>((done) => sftp.fstat(handle, done))
export const readdir = (sftp: Sftp, path: string): Promise<DirectoryEntry[]> =>
  request<DirectoryEntry[]>((done) => sftp.readdir(path, done))
export const mkdir = (sftp: Sftp, path: string) => request<void>((done) => sftp.mkdir(path, done))
export const unlink = (sftp: Sftp, path: string) => request<void>((done) => sftp.unlink(path, done))
/** The protocol's own rename (SSH_FXP_RENAME), which refuses an existing target; not posix-rename@openssh.com. */
export const rename = (sftp: Sftp, from: string, to: string) =>
  request<void>((done) => sftp.rename(from, to, done))
/** `flags` as fs.open takes them: `wx` creates a new file and refuses an existing one, `r` reads. */
export const open = (sftp: Sftp, path: string, flags: 'wx' | 'r') =>
  request<Buffer>((done) => sftp.open(path, flags, done))
export const close = (sftp: Sftp, handle: Buffer) => request<void>((done) => sftp.close(handle, done))
export const write = (sftp: Sftp, handle: Buffer, data: Buffer, position: number) =>
  request<void>((done) => sftp.write(handle, data, 0, data.length, position, done))
/** Reads up to `length` bytes at `position` into `into` at `offset`; resolves to the bytes read (0 at the end). */
export const read = (
  sftp: Sftp,
  handle: Buffer,
  into: Buffer,
  offset: number,
  length: number,
  position: number,
) =>
  request<number>((done) =>
    sftp.read(handle, into, offset, length, position, (error, bytesRead) => done(error, bytesRead)),
  )
/**
 * Flushes the file to the server's disk (fsync@openssh.com): resolves to false, sending nothing,
 * when the server does not offer the extension (ssh2 then throws before sending).
 */
export function fsync(sftp: Sftp, handle: Buffer): Promise<boolean> {
  return new Promise((resolve, reject) => {
    try {
      sftp.ext_openssh_fsync(handle, (error) => (error ? reject(error) : resolve(true)))
    } catch {
      resolve(false)
    }
  })
}
