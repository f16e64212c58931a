// The client's own pool speaks HTTP/1.1, so a process that leaves a prefetching loop early survives
// a server that prefers HTTP/2 (issue 11, "A crash"). Over h2, undici 8 aborts the streams in
// flight at the `break`; when the idle session is torn down later it emits an unhandled 'error'
// on a released ClientHttp2Stream and the process exits with code 1: `InformationalError: socket
// idle timeout` when undici ends its own idle session (after 4 s, its keep-alive default, which
// the SDK does not expose), `SocketError: other side closed` when the server ends it first.
//
// The user's program runs in a child process, because the failure is the process dying, against a
// loopback TLS server that offers h2 first (ALPN h2, then http/1.1). The child trusts the test's
// self-signed certificate the way a user with a private CA would, with NODE_EXTRA_CA_CERTS: the
// pool under test is the client's own, so nothing is passed to the client but its options.
// With `allowH2: true` in the transport, both cases below fail (exit code 1 with the errors above).
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createSecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { selfSignedCertificate, type Certificate } from '../helpers/certificates.ts'
import { sdkBundleUrl } from '../helpers/sdk-bundle.ts'

const KEY = { keyId: 'key_h2', keySecret: 'sk_test_h2_idle_secret_0123456789' }
const AGENTS = 10
/** How long the child stays idle after the loop (ms): past undici's 4 s h2 idle timeout and the server's. */
const IDLE_MS = 6_000
/** Pages after the third answer this late (ms), so that the prefetched ones are in flight at the `break`. */
const SLOW_PAGE_MS = 300
/**
 * The third page is answered once the request for the fourth has arrived (or after this long, ms):
 * the prefetches go out when the first page arrives, but each opens a TLS connection of its own,
 * and a consumer quicker than the fourth handshake left the loop, aborting it, before it was sent.
 */
const HOLD_THIRD_MS = 5_000

let dir: string
let certificate: Certificate & { certFile: string }

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'chat-service-sdk-h2-'))
  const certFile = join(dir, 'cert.pem')
  certificate = { ...selfSignedCertificate(['IP:127.0.0.1']), certFile }
  writeFileSync(certFile, certificate.cert)
})

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

interface Seen {
  /** `2.0` for h2, `1.1` for HTTP/1.1. */
  httpVersion: string
  /** The protocol ALPN settled on for the connection. */
  alpn: string
  target: string
}

/** A TLS server preferring h2 that serves GET /rest/v1/agents as the spec has it (credentials in the JSON body). */
async function startServer(sessionTimeoutMs: number | undefined): Promise<{ origin: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = []
  let fourthArrived = (): void => {}
  const fourth = new Promise<void>((resolve) => {
    fourthArrived = resolve
  })
  const handle = (req: Http2ServerRequest, res: Http2ServerResponse): void => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const alpn = (req.socket as { alpnProtocol?: string | false }).alpnProtocol
      seen.push({ httpVersion: req.httpVersion, alpn: String(alpn), target: req.url })
      const reply = (status: number, payload: unknown): void => {
        if (res.destroyed) return
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(payload))
      }
      const body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as Record<string, unknown>
      if (body.keyId !== KEY.keyId || body.keySecret !== KEY.keySecret) {
        reply(401, { error: 'invalid credentials' })
        return
      }
      const url = new URL(req.url, 'https://127.0.0.1')
      if (req.method !== 'GET' || url.pathname !== '/rest/v1/agents') {
        reply(404, { error: 'not found' })
        return
      }
      const page = Number(url.searchParams.get('page') ?? '1')
      const limit = Number(url.searchParams.get('limit') ?? '20')
      const at = '2026-01-01T00:00:00.000Z'
      const agents = Array.from({ length: AGENTS }, (_, i) => ({
        id: `agt_${i + 1}`,
        name: `Agent ${i + 1}`,
        active: true,
        created_at: at,
        updated_at: at,
      }))
      const pagination = { page, limit, total: AGENTS, total_pages: Math.ceil(AGENTS / limit) }
      let answered = false
      const answer = (): void => {
        if (answered) return
        answered = true
        reply(200, { data: agents.slice((page - 1) * limit, page * limit), pagination })
      }
      if (page === 4) fourthArrived()
      if (page === 3) {
        const held = setTimeout(answer, HOLD_THIRD_MS)
        void fourth.then(() => {
          clearTimeout(held)
          answer()
        })
      } else setTimeout(answer, page > 3 ? SLOW_PAGE_MS : 0)
    })
  }
  const server = createSecureServer({ key: certificate.key, cert: certificate.cert, allowHTTP1: true }, handle)
  if (sessionTimeoutMs !== undefined) server.setTimeout(sessionTimeoutMs)
  await new Promise<void>((resolve) => {
    server.listen(0, '127.0.0.1', resolve)
  })
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
  const close = (): Promise<void> =>
    new Promise((resolve) => {
      server.close(() => {
        resolve()
      })
    })
  return { origin, seen, close }
}

/** The user's program: a prefetching loop left after page 3, then idle, then the end of the script (no close()). */
const program = (sdk: string): string => `
  const { ChatServiceClient } = await import(${JSON.stringify(sdk)})
  const client = new ChatServiceClient({ baseUrl: process.env.BASE_URL, keyId: ${JSON.stringify(KEY.keyId)}, keySecret: ${JSON.stringify(KEY.keySecret)}, logLevel: 'off' })
  let items = 0
  for await (const agent of client.agents.list({ limit: 1 }, { prefetch: 4 })) {
    if (++items === 3) break
  }
  console.log('left the loop after', items, 'agents')
  await new Promise((resolve) => setTimeout(resolve, ${IDLE_MS}))
  console.log('idle period over')
`

/** Runs the program in a fresh Node (the project's) that trusts the test certificate; resolves when it exits by itself. */
async function runChild(origin: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // Today's src/, bundled with undici and zod (test/helpers/sdk-bundle.ts): the same code, started on less CPU.
  const sdk = await sdkBundleUrl()
  const { NODE_OPTIONS: _options, ...env } = process.env
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', program(sdk)], {
      env: { ...env, BASE_URL: origin, NODE_EXTRA_CA_CERTS: certificate.certFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const guard = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`the child did not exit by itself within 25 s; stdout: ${stdout}; stderr: ${stderr}`))
    }, 25_000)
    child.on('close', (code) => {
      clearTimeout(guard)
      resolve({ code, stdout, stderr })
    })
  })
}

describe.concurrent('a prefetching loop left after page 3 against a server that prefers HTTP/2, then idle', () => {
  it.each([
    ['undici ends the idle session itself (4 s)', undefined],
    ['the server ends idle sessions after 1 s', 1_000],
  ])(
    '%s: the process lives, exits 0 by itself, and spoke HTTP/1.1 only',
    async (_case, sessionTimeoutMs) => {
      const server = await startServer(sessionTimeoutMs)
      try {
        const { code, stdout, stderr } = await runChild(server.origin)
        expect(stderr).toBe('')
        expect(stdout).toBe('left the loop after 3 agents\nidle period over\n')
        expect(code).toBe(0)
        const asked = server.seen.map((request) => new URL(request.target, server.origin))
        expect(asked.every((url) => url.pathname === '/rest/v1/agents' && url.searchParams.get('limit') === '1')).toBe(true)
        // Pages 1 to 3 and at least one prefetched page (in flight when the loop was left).
        expect(asked.map((url) => Number(url.searchParams.get('page')))).toEqual(expect.arrayContaining([1, 2, 3, 4]))
        // The server offered h2 first; the client's own pool chose HTTP/1.1 on every connection.
        expect(new Set(server.seen.map((request) => `${request.httpVersion} ${request.alpn}`))).toEqual(new Set(['1.1 http/1.1']))
      } finally {
        await server.close()
      }
    },
    40_000,
  )
})
