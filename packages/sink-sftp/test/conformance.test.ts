import type { SinkHarness } from '@skippr/conformance'
import { objectRows, overwriteOnRetrySuite } from '@skippr/conformance'
import { afterAll, beforeAll } from 'vitest'
import type { SftpSinkConfig, SftpStore } from '../src/index.js'
import { freshDir, loginConfig, type SshServer, sinkFrom, startSshd, storeOn } from './server.js'

let server: SshServer
beforeAll(async () => {
  server = await startSshd()
})
afterAll(() => server?.stop())

/** A sink made from its config, on a directory of its own, read back as a user downstream would. */
function sftpHarness(
  format: SftpSinkConfig['format'],
  compression: SftpSinkConfig['compression'],
): SinkHarness {
  const dir = freshDir(`${format}-${compression}`)
  let reader: SftpStore | undefined
  return {
    name: `sftp (${format}, ${compression})`,
    createSink: () => sinkFrom({ ...loginConfig(server, dir), prefix: 'raw/skippr', format, compression }),
    readRows: (namespace) => {
      reader ??= storeOn(server, `${dir}/raw/skippr`)
      return objectRows(reader, namespace)
    },
    cleanup: async () => reader?.close(),
  }
}

overwriteOnRetrySuite(sftpHarness('jsonl', 'none'))
overwriteOnRetrySuite(sftpHarness('csv', 'gzip'))
overwriteOnRetrySuite(sftpHarness('parquet', 'zstd'))
