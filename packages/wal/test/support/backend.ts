import { diskWal, type WalBackendType } from '../../src/index.js'

/** A backend type of its own for the tests of injection: the disk log, kept under `dataDir` whatever the caller says. */
export function diskWalIn(dataDir: string): WalBackendType {
  return {
    name: 'disk-elsewhere',
    open: (options) => diskWal.open({ ...options, dataDir }),
    openSnapshot: (options) => diskWal.openSnapshot({ ...options, dataDir }),
  }
}
