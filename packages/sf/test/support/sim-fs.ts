/**
 * An in-memory SlotFs with a page cache: writes land in the cache at once and reach "disk" only through
 * fdatasync (file data) or a directory fsync (names). crash() builds what a power loss could leave behind:
 * every synced byte, plus each unsynced write either lost, torn to a prefix or kept, and a prefix of the
 * unsynced directory operations (journaled metadata stays ordered). It also injects faults.
 */
import path from 'node:path'
import { IOV_MAX, type OpenMode, type SlotFile, type SlotFs } from '../../src/io.js'

interface Node {
  data: Buffer
  size: number
  durable: Buffer
  pending: Array<{ pos: number; bytes: Buffer }>
}

type DirOp =
  | { op: 'link'; name: string; node: Node }
  | { op: 'unlink'; name: string }
  | { op: 'rename'; from: string; to: string }

export type Fault = (op: string, file: string) => Error | undefined

export function errno(code: string): Error {
  return Object.assign(new Error(`${code}: simulated`), { code })
}

/** The first `max` bytes of `buffers` back to back, as views: what a short writev writes. */
export function prefixOf(buffers: readonly Uint8Array[], max: number): Uint8Array[] {
  const out: Uint8Array[] = []
  let left = max
  for (const b of buffers) {
    if (left <= 0) break
    out.push(b.length <= left ? b : b.subarray(0, left))
    left -= b.length
  }
  return out
}

export class SimFs implements SlotFs {
  private names = new Map<string, Node>()
  private durableNames = new Map<string, Node>()
  private dirOps: DirOp[] = []
  private dead = false
  /** Return an error to make that operation fail. */
  fault: Fault | undefined
  /** Writes write at most this many bytes per call. */
  maxWriteBytes = Number.POSITIVE_INFINITY
  /** Microtask hops before an operation completes, so concurrent work interleaves. */
  private hop: () => number

  constructor(private readonly rng: () => number = Math.random) {
    this.hop = () => Math.floor(this.rng() * 3)
  }

  /** Freezes this view (all later calls fail with EIO) and returns a view of what survives a power loss. */
  crash(): SimFs {
    this.dead = true
    const next = new SimFs(this.rng)
    const names = new Map(this.durableNames)
    const keepOps = Math.floor(this.rng() * (this.dirOps.length + 1))
    for (const op of this.dirOps.slice(0, keepOps)) applyDirOp(names, op)
    const survivors = new Map<Node, Node>()
    for (const [name, node] of names) {
      let copy = survivors.get(node)
      if (!copy) {
        copy = this.survivingContent(node)
        survivors.set(node, copy)
      }
      next.names.set(name, copy)
      next.durableNames.set(name, copy)
    }
    return next
  }

  /** Freezes this view and returns one where everything written survives (a process kill, not power loss). */
  kill(): SimFs {
    this.dead = true
    const next = new SimFs(this.rng)
    for (const [name, node] of this.names) {
      const copy = {
        data: Buffer.from(node.data.subarray(0, node.size)),
        size: node.size,
        durable: Buffer.alloc(0),
        pending: [],
      }
      copy.durable = Buffer.from(copy.data)
      next.names.set(name, copy)
      next.durableNames.set(name, copy)
    }
    return next
  }

  private survivingContent(node: Node): Node {
    const data = Buffer.from(node.durable)
    let size = data.length
    let buf = data
    for (const w of node.pending) {
      const r = this.rng()
      if (r < 0.4) continue
      const bytes = r < 0.6 ? w.bytes.subarray(0, Math.floor(this.rng() * w.bytes.length)) : w.bytes
      if (w.pos + bytes.length > buf.length) {
        const bigger = Buffer.alloc(w.pos + bytes.length)
        buf.copy(bigger)
        buf = bigger
      }
      bytes.copy(buf, w.pos)
      size = Math.max(size, w.pos + bytes.length)
    }
    const content = Buffer.from(buf.subarray(0, size))
    return { data: Buffer.from(content), size, durable: content, pending: [] }
  }

  /** Current content of a file (page cache view), for tests that inspect or damage files. */
  read(file: string): Buffer | undefined {
    const node = this.names.get(file)
    return node ? Buffer.from(node.data.subarray(0, node.size)) : undefined
  }

  open(file: string, mode: OpenMode): Promise<SlotFile> {
    return this.run('open', file, () => {
      let node = this.names.get(file)
      if (mode === 'w+') {
        node = { data: Buffer.alloc(0), size: 0, durable: Buffer.alloc(0), pending: [] }
        this.names.set(file, node)
        this.dirOps.push({ op: 'link', name: file, node })
      } else if (!node) throw errno('ENOENT')
      return new SimFile(this, node, file)
    })
  }

  readdir(dir: string): Promise<string[]> {
    return this.run('readdir', dir, () =>
      [...this.names.keys()].filter((n) => path.dirname(n) === dir).map((n) => path.basename(n)),
    )
  }

  async mkdir(): Promise<void> {}

  rename(from: string, to: string): Promise<void> {
    return this.run('rename', to, () => {
      const node = this.names.get(from)
      if (!node) throw errno('ENOENT')
      this.names.delete(from)
      this.names.set(to, node)
      this.dirOps.push({ op: 'rename', from, to })
    })
  }

  unlink(file: string): Promise<void> {
    return this.run('unlink', file, () => {
      if (this.names.delete(file)) this.dirOps.push({ op: 'unlink', name: file })
    })
  }

  syncDir(dir: string): Promise<void> {
    return this.run('syncDir', dir, () => {
      this.durableNames = new Map(this.names)
      this.dirOps = []
    })
  }

  /**
   * @internal Runs an operation after a few microtask hops, so concurrent work interleaves. The crash
   * check, the fault and the operation's effect happen in one synchronous step: a call either took
   * effect before a crash or fails with EIO, never both.
   */
  async run<T>(op: string, file: string, body: () => T): Promise<T> {
    for (let i = this.hop(); i > 0; i--) await Promise.resolve()
    if (this.dead) throw errno('EIO')
    const e = this.fault?.(op, file)
    if (e) throw e
    return body()
  }

  /** @internal */
  get writeLimit(): number {
    return this.maxWriteBytes
  }
}

class SimFile implements SlotFile {
  constructor(
    private readonly fs: SimFs,
    private readonly node: Node,
    private readonly name: string,
  ) {}

  write(buf: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    return this.fs.run('write', this.name, () => {
      const n = Math.min(length, this.fs.writeLimit)
      return this.cache(Buffer.from(buf.subarray(offset, offset + n)), position)
    })
  }

  /** One write in the page cache: a crash may lose it or tear it to a prefix, like any write. */
  writev(buffers: readonly Uint8Array[], position: number): Promise<number> {
    return this.fs.run('writev', this.name, () => {
      if (buffers.length > IOV_MAX) throw errno('EINVAL')
      return this.cache(Buffer.concat(prefixOf(buffers, this.fs.writeLimit)), position)
    })
  }

  private cache(bytes: Buffer, position: number): number {
    const node = this.node
    if (position + bytes.length > node.data.length) {
      const bigger = Buffer.alloc(Math.max(position + bytes.length, node.data.length * 2))
      node.data.copy(bigger)
      node.data = bigger
    }
    bytes.copy(node.data, position)
    node.size = Math.max(node.size, position + bytes.length)
    node.pending.push({ pos: position, bytes })
    return bytes.length
  }

  read(buf: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    return this.fs.run('read', this.name, () => {
      const n = Math.max(0, Math.min(length, this.node.size - position))
      buf.set(this.node.data.subarray(position, position + n), offset)
      return n
    })
  }

  datasync(): Promise<void> {
    return this.fs.run('datasync', this.name, () => {
      this.node.durable = Buffer.from(this.node.data.subarray(0, this.node.size))
      this.node.pending = []
    })
  }

  size(): Promise<number> {
    return this.fs.run('size', this.name, () => this.node.size)
  }

  async close(): Promise<void> {}
}

function applyDirOp(names: Map<string, Node>, op: DirOp): void {
  if (op.op === 'link') names.set(op.name, op.node)
  else if (op.op === 'unlink') names.delete(op.name)
  else {
    const node = names.get(op.from)
    if (node) {
      names.delete(op.from)
      names.set(op.to, node)
    }
  }
}
