/**
 * A crash-safe ResumePositions on one JSON file (write temp, fsync, rename, fsync dir): the stand-in for
 * the @skippr/state store in this package's tests.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs'
import path from 'node:path'
import type { Offset, ResumePositions } from '../../src/index.js'

export function filePositions(file: string): ResumePositions & { saves: number } {
  return {
    saves: 0,
    async load() {
      try {
        return (JSON.parse(readFileSync(file, 'utf8')) as { offset?: Offset }).offset
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined
        throw e
      }
    },
    async save(offset) {
      this.saves++
      const tmp = `${file}.tmp`
      const fd = openSync(tmp, 'w')
      writeSync(fd, JSON.stringify(offset === undefined ? {} : { offset }))
      fsyncSync(fd)
      closeSync(fd)
      renameSync(tmp, file)
      const dir = openSync(path.dirname(file), 'r')
      fsyncSync(dir)
      closeSync(dir)
    },
  }
}
