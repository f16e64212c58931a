/**
 * Self-signed TLS certificates made at test time with the `openssl` CLI, in a temporary directory
 * (removed at once: the PEM text is all the tests need).
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface Certificate {
  /** PEM private key. */
  readonly key: string
  /** PEM certificate (self-signed: also its own CA). */
  readonly cert: string
}

/**
 * A self-signed certificate (EC P-256, valid one day) for the given subject alternative names,
 * e.g. `['DNS:x.example', 'IP:127.0.0.1']`.
 */
export function selfSignedCertificate(altNames: readonly string[], commonName = 'chat-service-sdk test'): Certificate {
  const dir = mkdtempSync(join(tmpdir(), 'chat-service-sdk-tls-'))
  try {
    const key = join(dir, 'key.pem')
    const cert = join(dir, 'cert.pem')
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        `/CN=${commonName}`,
        '-addext',
        `subjectAltName=${altNames.join(',')}`,
      ],
      { stdio: 'pipe' },
    )
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
