/**
 * Final failures (issue 11) at a real https loopback server: a certificate the client refuses is
 * final (exactly one connection attempt, counted at the server) and its APIConnectionError names
 * the problem and both ways out (NODE_EXTRA_CA_CERTS, a dispatcher with `connect: { ca }`). Base
 * URLs: another API version is refused; scheme, host and `/rest/v1` in any case, and a `URL`
 * object, send requests to exactly one `/rest/v1` prefix. Certificates are made with `openssl`.
 */
import { connect as tlsConnect } from 'node:tls'
import { Agent } from 'undici'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { APIConnectionError, ChatServiceClient, RequestValidationError } from 'chat-service-sdk'
import { selfSignedCertificate, type Certificate } from '../helpers/certificates.ts'
import { KEY_ID, KEY_SECRET, emptyListFor } from '../helpers/fixtures.ts'
import { rejection, startLoopback, targetOf, until, type LoopbackServer } from '../helpers/loopback.ts'

/** Valid for 127.0.0.1, localhost and x.example, but signed by nobody the client trusts. */
let loopbackCert: Certificate
/** Valid only for x.example. */
let otherHostCert: Certificate
let server: LoopbackServer
let otherHost: LoopbackServer

beforeAll(async () => {
  loopbackCert = selfSignedCertificate(['IP:127.0.0.1', 'DNS:localhost', 'DNS:x.example'])
  otherHostCert = selfSignedCertificate(['DNS:x.example'])
  server = await startLoopback({ tls: loopbackCert })
  otherHost = await startLoopback({ tls: otherHostCert })
  for (const s of [server, otherHost]) s.respond((request) => ({ body: emptyListFor(targetOf(request).pathname) }))
})
afterAll(async () => {
  await Promise.all([server.close(), otherHost.close()])
})
beforeEach(() => {
  server.clear()
  otherHost.clear()
})

/** A client with retries on (the default 2): a failure that is final must still be tried once only. */
function clientFor(origin: string | URL, extra: Partial<ConstructorParameters<typeof ChatServiceClient>[0]> = {}): ChatServiceClient {
  return new ChatServiceClient({ baseUrl: origin, keyId: KEY_ID, keySecret: KEY_SECRET, logLevel: 'off', ...extra })
}

/** An undici Agent that trusts `cert` and connects every origin to `port` on 127.0.0.1 (TLS names as the origin says). */
function loopbackAgent(port: number, cert: string): Agent {
  return new Agent({
    connect: (options, callback) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, servername: options.hostname, ca: cert, ALPNProtocols: ['http/1.1'] })
      socket.once('secureConnect', () => {
        callback(null, socket)
      })
      socket.once('error', (error: Error) => {
        callback(error, null)
      })
    },
  })
}

describe('a certificate the client refuses', () => {
  it('self-signed: one connection attempt, an APIConnectionError that names the problem and both remedies', async () => {
    const client = clientFor(server.origin)
    const before = server.connections
    try {
      const error = await rejection(client.agents.list())
      expect(error).toBeInstanceOf(APIConnectionError)
      const message = (error as APIConnectionError).message
      expect(message).toMatch(/self[- ]signed certificate/i)
      expect(message).toContain('NODE_EXTRA_CA_CERTS')
      expect(message).toContain('connect: { ca }')
      expect(message).toContain('GET /rest/v1/agents')
      expect((error as APIConnectionError).cause).toMatchObject({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' })
      await until(() => server.tlsClientErrors > 0)
      expect(server.connections - before).toBe(1)
      expect(server.arrivals).toHaveLength(0)
    } finally {
      await client.close()
    }
  })

  it('the remedy the message names works: a dispatcher with connect: { ca } reaches the same server', async () => {
    const dispatcher = new Agent({ connect: { ca: loopbackCert.cert } })
    const client = clientFor(server.origin, { dispatcher })
    try {
      await expect(client.agents.list()).resolves.toMatchObject({ data: [] })
      expect(server.arrivals).toHaveLength(1)
    } finally {
      await client.close()
      await dispatcher.close()
    }
  })

  it('a trusted certificate for another host name: one connection attempt, the error names the host-name mismatch', async () => {
    const dispatcher = new Agent({ connect: { ca: otherHostCert.cert } })
    const client = clientFor(otherHost.origin, { dispatcher })
    const before = otherHost.connections
    try {
      const error = await rejection(client.conversations.list())
      expect(error).toBeInstanceOf(APIConnectionError)
      expect((error as Error).message).toMatch(/altnames|host ?name|does not match/i)
      expect((error as Error).message).toContain('NODE_EXTRA_CA_CERTS')
      expect(otherHost.connections - before).toBe(1)
      expect(otherHost.arrivals).toHaveLength(0)
    } finally {
      await client.close()
      await dispatcher.close()
    }
  })
})

describe('base URL forms', () => {
  it.each([
    ['https://x/rest/v2', 'v2'],
    ['https://x.example/REST/V2/', 'v2'],
    ['https://x.example/api/rest/v3', 'v3'],
  ])('%s is a RequestValidationError naming the version (%s)', (baseUrl, version) => {
    let error: unknown
    try {
      clientFor(baseUrl)
    } catch (thrown) {
      error = thrown
    }
    expect(error).toBeInstanceOf(RequestValidationError)
    expect((error as Error).message.toLowerCase()).toContain(`version ${version}`)
    expect((error as Error).message).toContain('/rest/v1')
  })

  it.each([['HTTPS://X.EXAMPLE/REST/V1'], ['https://x.example/Rest/V1/'], ['https://X.Example'], ['https://x.example//rest/v1//']])(
    '%s sends requests to /rest/v1/... exactly once',
    async (baseUrl) => {
      const dispatcher = loopbackAgent(server.port, loopbackCert.cert)
      const client = clientFor(baseUrl, { dispatcher })
      try {
        expect(client.baseUrl).toBe('https://x.example/rest/v1')
        await client.agents.list()
        await client.customerUsers.update('cu-1', { name: 'n' }).catch(() => undefined)
        expect(server.arrivals).toHaveLength(2)
        expect(server.arrivals.map((arrival) => targetOf(arrival).pathname)).toStrictEqual([
          '/rest/v1/agents',
          '/rest/v1/customer-users/cu-1',
        ])
        expect(server.arrivals[0]?.headers.host).toBe('x.example')
      } finally {
        await client.close()
        await dispatcher.close()
      }
    },
  )

  it.each([
    ['an origin', (origin: string) => new URL(origin)],
    ['a URL ending in /rest/v1/', (origin: string) => new URL(`${origin}/rest/v1/`)],
  ])('a URL object (%s) is accepted as baseUrl', async (_name, make) => {
    const dispatcher = new Agent({ connect: { ca: loopbackCert.cert } })
    const client = clientFor(make(server.origin), { dispatcher })
    try {
      expect(client.baseUrl).toBe(`${server.origin}/rest/v1`)
      await client.agents.list()
      expect(targetOf(server.arrivals[0]!).pathname).toBe('/rest/v1/agents')
    } finally {
      await client.close()
      await dispatcher.close()
    }
  })
})
