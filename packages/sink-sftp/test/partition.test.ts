/** `partition_by` on SFTP: the shared suite against OpenSSH's sshd, where files are created once. */
import { partitionSuite } from '@skippr/conformance'
import { freshDir, loginConfig, type SshServer, sinkFrom, startSshd, storeOn } from './server.js'

let server: SshServer
const dir = freshDir('partition')
partitionSuite({
  name: 'sftp (sshd)',
  setup: async () => {
    server = await startSshd()
  },
  sinkAt: async (prefix, fields) => ({
    sink: await sinkFrom({ ...loginConfig(server, dir), prefix, ...fields }, 'orders-sync'),
    store: storeOn(server, `${dir}/${prefix}`),
  }),
  cleanup: async () => server?.stop(),
})
