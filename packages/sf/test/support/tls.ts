/** A throwaway self-signed certificate for 127.0.0.1, made with the openssl CLI in a temp dir. */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

export interface TestCertificate {
  key: Buffer
  cert: Buffer
  /** Path of the certificate as a PEM file (it is its own CA), for `tls_roots=`. */
  certPath: string
  dir: string
  cleanup(): void
}

export function makeSelfSignedCertificate(): TestCertificate {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skippr-tls-'))
  const keyPath = path.join(dir, 'key.pem')
  const certPath = path.join(dir, 'cert.pem')
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  )
  return {
    key: readFileSync(keyPath),
    cert: readFileSync(certPath),
    certPath,
    dir,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  }
}
