/** Each endpoint's success path, through msw intercepting the SDK's real undici traffic. */
import { readFileSync } from 'node:fs'
import { http, HttpResponse } from 'msw'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { APIConnectionError, ChatServiceClient, MessagePage, Page, RequestValidationError, VERSION } from 'chat-service-sdk'
import {
  API,
  BASE,
  KEY_ID,
  KEY_SECRET,
  agent,
  conversation,
  customerUser,
  listBody,
  message,
  tokenResponse,
  updatedUser,
} from '../helpers/fixtures.ts'
import { setupMsw, type SeenRequest } from '../helpers/msw.ts'
import { ENDPOINTS } from '../../src/endpoints.ts'
import { SAMPLED } from '../helpers/endpoint-samples.ts'

const msw = setupMsw()
let client: ChatServiceClient

beforeEach(() => {
  client = new ChatServiceClient({ baseUrl: BASE, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0 })
})
afterEach(async () => {
  await client.close()
})

it("every endpoint of the spec's table (src/endpoints.ts) is a method of the client, under the name its errors and traces use", () => {
  for (const endpoint of Object.values(ENDPOINTS)) {
    const method = endpoint.name.split('.').reduce<unknown>((at, key) => (at as Record<string, unknown> | undefined)?.[key], client)
    expect(typeof method, endpoint.name).toBe('function')
  }
  const numbers = Object.values(ENDPOINTS).map((endpoint) => endpoint.spec)
  expect(new Set(numbers).size).toBe(numbers.length)
})

describe('every endpoint of the table, through msw', () => {
  it.each(SAMPLED)(
    '$name: $method $path answers with the service body (a page for a list), standard headers, credentials only in the body',
    async (sample) => {
      const reply = sample.reply()
      const route = `${BASE}${sample.path}`
      const method = sample.method === 'GET' ? http.get : sample.method === 'PUT' ? http.put : http.post
      msw.use(method(route, () => HttpResponse.json(reply)))
      const result = await sample.call(client)
      if (sample.list) {
        expect(result).toBeInstanceOf(Page)
        expect((result as Page<unknown>).data).toEqual(reply['data'])
      } else {
        expect(result).toEqual(reply)
      }
      const request = await only()
      expect(request.method).toBe(sample.method)
      expect(request.url.pathname).toBe(sample.path)
      expectStandardHeaders(request)
    },
  )
})

async function only(): Promise<SeenRequest> {
  const requests = await msw.requests()
  expect(requests).toHaveLength(1)
  return requests[0] as SeenRequest
}

/** The headers every request carries, and no credential anywhere in the headers or the URL. */
function expectStandardHeaders(request: SeenRequest): void {
  expect(request.headers['content-type']).toBe('application/json')
  expect(request.headers['accept']).toBe('application/json')
  expect(request.headers['user-agent']).toBe(`chat-service-sdk/${VERSION} node/${process.versions.node}`)
  for (const [name, value] of Object.entries(request.headers)) {
    expect(`${name}: ${value}`).not.toContain(KEY_SECRET)
    expect(`${name}: ${value}`).not.toContain(KEY_ID)
  }
  expect(request.url.href).not.toContain(KEY_SECRET)
  expect(request.url.href).not.toContain(KEY_ID)
  expect(request.headers['authorization']).toBeUndefined()
}

describe('user-agent', () => {
  it('VERSION is the package.json version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
    expect(VERSION).toBe(pkg.version)
  })
})

describe('auth.issueToken: POST /rest/v1/auth/token', () => {
  it('sends exactly the credentials and the given fields as JSON, and returns the parsed result with unknown fields kept', async () => {
    const body = { ...tokenResponse(), expires_at: '2030-01-01T00:00:00Z', user: { ...(tokenResponse().user as object), extra: 1 } }
    msw.use(http.post(`${API}/auth/token`, () => HttpResponse.json(body)))

    const result = await client.auth.issueToken({ userId: 'ext-1', agentId: 'agent-2', expiresIn: '7d' })

    expect(result).toEqual(body)
    expect(result.token).toBe('tok_signed_abc.def.ghi')
    expect(result.user.externalId).toBe('ext-1')
    expect((result as Record<string, unknown>)['expires_at']).toBe('2030-01-01T00:00:00Z')
    expect((result.user as Record<string, unknown>)['extra']).toBe(1)
    const request = await only()
    expect(request.method).toBe('POST')
    expect(request.url.pathname).toBe('/rest/v1/auth/token')
    expect(request.url.search).toBe('')
    expectStandardHeaders(request)
    expect(JSON.parse(request.body)).toStrictEqual({
      keyId: KEY_ID,
      keySecret: KEY_SECRET,
      userId: 'ext-1',
      agentId: 'agent-2',
      expiresIn: '7d',
    })
  })

  it('omits agentId and expiresIn from the body when not given', async () => {
    msw.use(http.post(`${API}/auth/token`, () => HttpResponse.json(tokenResponse())))
    await client.auth.issueToken({ userId: 'ext-9' })
    const request = await only()
    expect(JSON.parse(request.body)).toStrictEqual({ keyId: KEY_ID, keySecret: KEY_SECRET, userId: 'ext-9' })
  })

  it.each([
    ['agent null, user.agentId null', { token: 't-1', user: { id: 'cu-1', externalId: 'e', companyId: 'c', agentId: null }, agent: null }],
    ['agent and user.agentId absent', { token: 't-1', user: { id: 'cu-1', externalId: 'e', companyId: 'c' } }],
  ])('without agentId, accepts %s', async (_label, body) => {
    msw.use(http.post(`${API}/auth/token`, () => HttpResponse.json(body)))
    const result = await client.auth.issueToken({ userId: 'e' })
    expect(result).toEqual(body)
    expect(result.agent ?? null).toBeNull()
    expect(result.user.agentId ?? null).toBeNull()
  })

  it.each(['1h', '7d', '24h', '30d'] as const)('accepts expiresIn %s and sends it unchanged', async (expiresIn) => {
    msw.use(http.post(`${API}/auth/token`, () => HttpResponse.json(tokenResponse())))
    await client.auth.issueToken({ userId: 'e', expiresIn })
    expect(JSON.parse((await only()).body)).toMatchObject({ expiresIn })
  })

  it.each(['0h', '1m', '1.5h', 'h', '10', '', '-1h', '1 h', '1H', '1w'])('refuses expiresIn %j before sending', async (expiresIn) => {
    const error = await client.auth.issueToken({ userId: 'e', expiresIn: expiresIn as '1h' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RequestValidationError)
    expect((error as RequestValidationError).issues.map((issue) => issue.path)).toContainEqual(['expiresIn'])
    expect(msw.count()).toBe(0)
  })
})

describe('customerUsers.list: GET /rest/v1/customer-users', () => {
  it('sends page and limit in the query, standard headers, and returns a Page with unknown fields kept', async () => {
    const users = [{ ...customerUser(1), tier: 'gold' }, customerUser(2)]
    msw.use(http.get(`${API}/customer-users`, () => HttpResponse.json({ ...listBody(users, 2, 2, 4), extra_top: true })))

    const page = await client.customerUsers.list({ page: 2, limit: 2, external_id: 'ext-1', name: 'User', email: 'u@example.com' })

    expect(page).toBeInstanceOf(Page)
    expect(page.data).toEqual(users)
    expect((page.data[0] as Record<string, unknown>)['tier']).toBe('gold')
    expect(page.data[0]?.metadata).toEqual({ plan: 'pro', nested: { level: 1 } })
    expect(page.pagination).toEqual({ page: 2, limit: 2, total: 4, total_pages: 2 })
    const request = await only()
    expect(request.method).toBe('GET')
    expect(request.url.pathname).toBe('/rest/v1/customer-users')
    expect([...request.url.searchParams].sort()).toEqual([
      ['limit', '2'],
      ['page', '2'],
    ])
    expectStandardHeaders(request)
    // msw cannot show a GET body, but its length shows one was sent (the body itself is checked in wire.test.ts).
    expect(Number(request.headers['content-length'])).toBeGreaterThan(0)
  })

  it('does not put the filters in the query string', async () => {
    msw.use(http.get(`${API}/customer-users`, () => HttpResponse.json(listBody([customerUser(1)]))))
    await client.customerUsers.list({ external_id: 'ext-1', name: 'n', email: 'e@x.io' })
    const request = await only()
    for (const key of request.url.searchParams.keys()) expect(['page', 'limit']).toContain(key)
  })

  it('accepts null name, email, metadata and last_seen_at', async () => {
    const user = { ...customerUser(1), name: null, email: null, metadata: null, last_seen_at: null }
    msw.use(http.get(`${API}/customer-users`, () => HttpResponse.json(listBody([user]))))
    const page = await client.customerUsers.list()
    expect(page.data).toEqual([user])
  })
})

describe('customerUsers.update: PUT /rest/v1/customer-users/:id', () => {
  it('sends the credentials and only the given fields, and returns the update shape with unknown fields kept', async () => {
    const body = { ...updatedUser('cu-1'), version: 3 }
    msw.use(http.put(`${API}/customer-users/cu-1`, () => HttpResponse.json(body)))

    const metadata = { plan: 'pro', version: 2, nested: { a: [1, 'two', null, true] } }
    const result = await client.customerUsers.update('cu-1', { name: 'New Name', metadata })

    expect(result).toEqual(body)
    expect((result as Record<string, unknown>)['version']).toBe(3)
    expect(result.updated_at).toBe('2024-03-01T00:00:00Z')
    const request = await only()
    expect(request.method).toBe('PUT')
    expect(request.url.pathname).toBe('/rest/v1/customer-users/cu-1')
    expect(request.url.search).toBe('')
    expectStandardHeaders(request)
    expect(JSON.parse(request.body)).toStrictEqual({ keyId: KEY_ID, keySecret: KEY_SECRET, name: 'New Name', metadata })
  })

  it.each([[{ name: 'A' }], [{ email: 'a@b.c' }], [{ metadata: {} }], [{ name: 'B', email: 'a@b.c', metadata: { k: 'v' } }]])(
    'sends exactly %j besides the credentials',
    async (params) => {
      msw.use(http.put(`${API}/customer-users/cu-1`, () => HttpResponse.json(updatedUser())))
      await client.customerUsers.update('cu-1', params)
      expect(JSON.parse((await only()).body)).toStrictEqual({ keyId: KEY_ID, keySecret: KEY_SECRET, ...params })
    },
  )
})

describe('agents.list: GET /rest/v1/agents', () => {
  it('sends the query and headers, returns a Page of agents with unknown fields kept', async () => {
    const agents = [{ ...agent(1), model: 'x' }, agent(2)]
    msw.use(
      http.get(`${API}/agents`, () =>
        HttpResponse.json({ data: agents, pagination: { ...(listBody(agents).pagination as object), cursor: 'c' } }),
      ),
    )

    const page = await client.agents.list({ limit: 100 })

    expect(page.data).toEqual(agents)
    expect((page.data[0] as Record<string, unknown>)['model']).toBe('x')
    expect((page.pagination as Record<string, unknown>)['cursor']).toBe('c')
    expect(page.hasNextPage()).toBe(false)
    const request = await only()
    expect(request.method).toBe('GET')
    expect(request.url.pathname).toBe('/rest/v1/agents')
    expect(request.url.searchParams.get('limit')).toBe('100')
    expect(request.url.searchParams.get('page') ?? '1').toBe('1')
    expectStandardHeaders(request)
  })
})

describe('conversations.list: GET /rest/v1/conversations', () => {
  it('sends the query and headers, returns a Page of conversations with unknown fields kept', async () => {
    const conversations = [conversation(1), { ...conversation(2), channel: 'web' }]
    msw.use(http.get(`${API}/conversations`, () => HttpResponse.json(listBody(conversations, 3, 2, 6))))

    const page = await client.conversations.list({ page: 3, limit: 2 })

    expect(page.data).toEqual(conversations)
    expect((page.data[1] as Record<string, unknown>)['channel']).toBe('web')
    expect(page.pagination).toEqual({ page: 3, limit: 2, total: 6, total_pages: 3 })
    const request = await only()
    expect(request.method).toBe('GET')
    expect(request.url.pathname).toBe('/rest/v1/conversations')
    expect([...request.url.searchParams].sort()).toEqual([
      ['limit', '2'],
      ['page', '3'],
    ])
    expectStandardHeaders(request)
  })
})

describe('conversations.messages.list: GET /rest/v1/conversations/:id/messages', () => {
  it('sends the query and headers, returns a MessagePage with conversation and unknown fields kept', async () => {
    const messages = [message(1), { ...message(2), tokens: 12 }]
    const body = listBody(messages, 1, 50, 2, { conversation: { id: 'conv-1', title: 'Support', pinned: true } })
    msw.use(http.get(`${API}/conversations/conv-1/messages`, () => HttpResponse.json(body)))

    const page = await client.conversations.messages.list('conv-1')

    expect(page).toBeInstanceOf(MessagePage)
    expect(page.data).toEqual(messages)
    expect((page.data[1] as Record<string, unknown>)['tokens']).toBe(12)
    expect(page.conversation).toEqual({ id: 'conv-1', title: 'Support', pinned: true })
    expect(page.data.map((m) => m.role)).toEqual(['user', 'assistant'])
    const request = await only()
    expect(request.method).toBe('GET')
    expect(request.url.pathname).toBe('/rest/v1/conversations/conv-1/messages')
    // The messages default limit is 50 (spec, Endpoint 6): either not sent, or sent as 50; never 20.
    expect(request.url.searchParams.get('limit') ?? '50').toBe('50')
    for (const key of request.url.searchParams.keys()) expect(['page', 'limit']).toContain(key)
    expectStandardHeaders(request)
  })

  it('keeps a role the spec does not list', async () => {
    const messages = [{ ...message(1), role: 'system' }]
    msw.use(
      http.get(`${API}/conversations/conv-1/messages`, () =>
        HttpResponse.json(listBody(messages, 1, 50, 1, { conversation: { id: 'conv-1', title: 'T' } })),
      ),
    )
    const page = await client.conversations.messages.list('conv-1', { limit: 10 })
    expect(page.data[0]?.role).toBe('system')
    expect((await only()).url.searchParams.get('limit')).toBe('10')
  })
})

describe('per-call headers', () => {
  it('adds client and per-call headers without replacing content-type', async () => {
    const custom = new ChatServiceClient({ baseUrl: BASE, keyId: KEY_ID, keySecret: KEY_SECRET, headers: { 'x-client': 'a' } })
    try {
      msw.use(http.get(`${API}/agents`, () => HttpResponse.json(listBody([]))))
      await custom.agents.list({}, { headers: { 'x-call': 'b' } })
      const request = await only()
      expect(request.headers['x-client']).toBe('a')
      expect(request.headers['x-call']).toBe('b')
      expect(request.headers['content-type']).toBe('application/json')
    } finally {
      await custom.close()
    }
  })
})

describe('unhandled requests', () => {
  it('a request no handler matches fails (onUnhandledFrame: error), and the harness sees it', async () => {
    msw.use(http.get(`${API}/agents`, () => HttpResponse.json(listBody([]))))
    const error = await client.conversations.list().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(APIConnectionError)
    const unhandled = msw.takeUnhandled()
    expect(unhandled).toHaveLength(1)
    expect(unhandled[0]).toMatch(new RegExp(`^GET ${API.replaceAll('.', '\\.')}/conversations(\\?|$)`))
  })
})
