/**
 * What the SDK puts on the wire, seen by a plain node:http server on 127.0.0.1: GET bodies (which
 * msw cannot show), raw request targets (percent-encoding), and the raw PUT/POST bodies.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ChatServiceClient, VERSION } from 'chat-service-sdk'
import { SAMPLED, sampleFor } from '../helpers/endpoint-samples.ts'
import { KEY_ID, KEY_SECRET, customerUser, emptyListFor, message, updatedUser } from '../helpers/fixtures.ts'
import { splitTarget, startWireServer, type WireRequest, type WireServer } from '../helpers/wire.ts'

let server: WireServer
let client: ChatServiceClient

beforeAll(async () => {
  server = await startWireServer()
})
afterAll(async () => {
  await server.close()
})
beforeEach(() => {
  server.requests.length = 0
  // Each endpoint's sample reply (test/helpers/endpoint-samples.ts).
  server.respond((request) => ({ body: sampleFor(request.method, splitTarget(request.target).pathname)?.reply() ?? {} }))
  client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0 })
})
afterEach(async () => {
  await client.close()
})

function only(): WireRequest {
  expect(server.requests).toHaveLength(1)
  return server.requests[0] as WireRequest
}

/** Credentials only in the body: never in a header or the request target. */
function expectCredentialsOnlyInBody(request: WireRequest): void {
  expect(request.target).not.toContain(KEY_SECRET)
  expect(request.target).not.toContain(KEY_ID)
  for (const [name, value] of Object.entries(request.headers)) {
    const line = `${name}: ${String(value)}`
    expect(line).not.toContain(KEY_SECRET)
    expect(line).not.toContain(KEY_ID)
  }
}

/** A JSON body with a content-length that matches it (no chunked GET body). */
function expectJsonBody(request: WireRequest): unknown {
  expect(request.headers['content-type']).toBe('application/json')
  expect(request.headers['accept']).toBe('application/json')
  expect(request.headers['user-agent']).toBe(`chat-service-sdk/${VERSION} node/${process.versions.node}`)
  expect(request.headers['transfer-encoding']).toBeUndefined()
  expect(Number(request.headers['content-length'])).toBe(Buffer.byteLength(request.body))
  return JSON.parse(request.body) as unknown
}

function queryKeys(request: WireRequest): string[] {
  return [...splitTarget(request.target).query.keys()].sort()
}

describe('every endpoint at the wire', () => {
  it.each(SAMPLED)('$name: $method $path with exactly the credentials and its members as the JSON body', async (sample) => {
    await sample.call(client)
    const request = only()
    expect(request.method).toBe(sample.method)
    expect(splitTarget(request.target).pathname).toBe(sample.path)
    expect(expectJsonBody(request)).toStrictEqual({ keyId: KEY_ID, keySecret: KEY_SECRET, ...sample.members })
    expectCredentialsOnlyInBody(request)
    for (const key of queryKeys(request)) expect(['limit', 'page']).toContain(key)
  })
})

describe('GET bodies at the wire', () => {
  it.each(SAMPLED.filter((sample) => sample.method === 'GET' && sample.members === undefined))(
    '$name sends exactly { keyId, keySecret } as the GET body',
    async (sample) => {
      await sample.call(client)
      const request = only()
      expect(request.method).toBe('GET')
      expect(expectJsonBody(request)).toStrictEqual({ keyId: KEY_ID, keySecret: KEY_SECRET })
    },
  )

  it.each(SAMPLED.filter((sample) => sample.list))('$name puts page and limit only in the query string', async (sample) => {
    server.respond((request) => {
      const body = emptyListFor(splitTarget(request.target).pathname)
      return { body: { ...body, pagination: { page: 2, limit: 5, total: 5, total_pages: 1 } } }
    })
    await sample.call(client, { page: 2, limit: 5 })
    const request = only()
    expect(queryKeys(request)).toEqual(['limit', 'page'])
    expect(splitTarget(request.target).query.get('page')).toBe('2')
    expect(splitTarget(request.target).query.get('limit')).toBe('5')
    expect(expectJsonBody(request)).toStrictEqual({ keyId: KEY_ID, keySecret: KEY_SECRET })
  })

  it.each([
    [{ external_id: 'ext-42' }],
    [{ name: 'Ada Lovelace' }],
    [{ email: 'ada@example.com' }],
    [{ name: 'Ada', email: 'ada@example.com', external_id: 'ext-42' }],
  ])('customerUsers.list with filters %j sends them in the body, never in the query', async (filters) => {
    server.respond(() => ({ body: { data: [customerUser(1)], pagination: { page: 1, limit: 3, total: 1, total_pages: 1 } } }))
    const page = await client.customerUsers.list({ limit: 3, ...filters })
    expect(page.data).toEqual([customerUser(1)])
    const request = only()
    expect(expectJsonBody(request)).toStrictEqual({ keyId: KEY_ID, keySecret: KEY_SECRET, ...filters })
    expect(queryKeys(request).filter((key) => key !== 'page')).toEqual(['limit'])
    for (const value of Object.values(filters)) expect(request.target).not.toContain(encodeURIComponent(value))
    expectCredentialsOnlyInBody(request)
  })

  it('every page of an iteration carries the same GET body and filters', async () => {
    const all = [customerUser(1), customerUser(2), customerUser(3)]
    server.respond((request) => {
      const page = Number(splitTarget(request.target).query.get('page') ?? '1')
      return { body: { data: all.slice(page - 1, page), pagination: { page, limit: 1, total: 3, total_pages: 3 } } }
    })
    const seen: unknown[] = []
    for await (const user of client.customerUsers.list({ limit: 1, external_id: 'ext-x' })) seen.push(user)
    expect(seen).toEqual(all)
    expect(server.requests).toHaveLength(3)
    for (const request of server.requests) {
      expect(expectJsonBody(request)).toStrictEqual({ keyId: KEY_ID, keySecret: KEY_SECRET, external_id: 'ext-x' })
      expect(queryKeys(request)).toEqual(['limit', 'page'])
    }
    expect(server.requests.map((r) => splitTarget(r.target).query.get('page'))).toEqual(['1', '2', '3'])
  })
})

describe('PUT and POST bodies at the wire', () => {
  it('issueToken: POST with exactly the credentials and params', async () => {
    await client.auth.issueToken({ userId: 'ext-1', agentId: 'agent-2', expiresIn: '1h' })
    const request = only()
    expect(request.method).toBe('POST')
    expect(request.target).toBe('/rest/v1/auth/token')
    expect(expectJsonBody(request)).toStrictEqual({
      keyId: KEY_ID,
      keySecret: KEY_SECRET,
      userId: 'ext-1',
      agentId: 'agent-2',
      expiresIn: '1h',
    })
    expectCredentialsOnlyInBody(request)
  })

  it('update: PUT with exactly the credentials and the fields given', async () => {
    await client.customerUsers.update('cu-1', { email: 'new@example.com' })
    const request = only()
    expect(request.method).toBe('PUT')
    expect(request.target).toBe('/rest/v1/customer-users/cu-1')
    expect(expectJsonBody(request)).toStrictEqual({ keyId: KEY_ID, keySecret: KEY_SECRET, email: 'new@example.com' })
    expectCredentialsOnlyInBody(request)
  })

  it('non-ASCII text is sent as UTF-8 with a matching content-length', async () => {
    await client.customerUsers.update('cu-1', { name: 'Zoë Ünïcødé 😀', metadata: { city: 'Zürich' } })
    const request = only()
    expect(expectJsonBody(request)).toStrictEqual({
      keyId: KEY_ID,
      keySecret: KEY_SECRET,
      name: 'Zoë Ünïcødé 😀',
      metadata: { city: 'Zürich' },
    })
  })
})

describe('percent-encoding of path parameters', () => {
  // `.` and `..` are refused before sending (test/hostile/ids.test.ts): no encoding keeps them ids.
  const ids = ['../agents', 'a/b', 'a?b', 'a#b', '...', '.a', '%2E%2E', '%2F', 'a b', 'ü/ñ', '?page=9&limit=1']

  it.each(ids)('update(%j) stays one path segment of /customer-users/', async (id) => {
    server.respond(() => ({ body: updatedUser(id) }))
    const result = await client.customerUsers.update(id, { name: 'n' })
    expect(result.id).toBe(id)
    const request = only()
    expect(request.target).not.toContain('?')
    expect(request.target).not.toContain('#')
    const segments = request.target.split('/')
    expect(segments).toHaveLength(5)
    expect(segments.slice(0, 4)).toEqual(['', 'rest', 'v1', 'customer-users'])
    const segment = segments[4] as string
    expect(segment).not.toBe('.')
    expect(segment).not.toBe('..')
    expect(decodeURIComponent(segment)).toBe(id)
  })

  it.each(ids)('messages.list(%j) stays one path segment, and the query holds only page/limit', async (id) => {
    server.respond(() => ({
      body: { data: [message(1, id)], pagination: { page: 1, limit: 50, total: 1, total_pages: 1 }, conversation: { id, title: 't' } },
    }))
    const page = await client.conversations.messages.list(id)
    expect(page.conversation.id).toBe(id)
    const request = only()
    const [path, query = '', ...rest] = request.target.split('?')
    expect(rest).toEqual([])
    expect(request.target).not.toContain('#')
    const segments = (path as string).split('/')
    expect(segments).toHaveLength(6)
    expect(segments.slice(0, 4)).toEqual(['', 'rest', 'v1', 'conversations'])
    expect(segments[5]).toBe('messages')
    const segment = segments[4] as string
    expect(segment).not.toBe('.')
    expect(segment).not.toBe('..')
    expect(decodeURIComponent(segment)).toBe(id)
    for (const key of new URLSearchParams(query).keys()) expect(['page', 'limit']).toContain(key)
    expect(new URLSearchParams(query).get('page') ?? '1').toBe('1')
  })
})

describe('base URL with a path prefix, at the wire', () => {
  it.each(['/chat', '/chat/', '/chat/rest/v1', '/chat/rest/v1/'])(
    'prefix %s: every request target starts with /chat/rest/v1/ exactly once',
    async (suffix) => {
      const prefixed = new ChatServiceClient({ baseUrl: `${server.origin}${suffix}`, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0 })
      try {
        for (const sample of SAMPLED) await sample.call(prefixed)
      } finally {
        await prefixed.close()
      }
      expect(server.requests.map((r) => splitTarget(r.target).pathname)).toEqual(SAMPLED.map((sample) => `/chat${sample.path}`))
    },
  )
})
