/** Responses that break the schema, are not JSON, or redirect. */
import { http, HttpResponse } from 'msw'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { APIError, ChatServiceClient, ResponseValidationError } from 'chat-service-sdk'
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
import { setupMsw } from '../helpers/msw.ts'

const msw = setupMsw()
let client: ChatServiceClient

beforeEach(() => {
  client = new ChatServiceClient({ baseUrl: BASE, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0 })
})
afterEach(async () => {
  await client.close()
})

async function rejection(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

function without(record: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _dropped, ...rest } = record
  return rest
}

const convo = { id: 'conv-1', title: 'T' }

interface Case {
  readonly label: string
  readonly method: 'get' | 'put' | 'post'
  readonly route: string
  readonly call: () => PromiseLike<unknown>
  readonly body: unknown
  readonly path: (string | number)[]
}

const cases: Case[] = [
  {
    label: 'token without token',
    method: 'post',
    route: `${API}/auth/token`,
    call: () => client.auth.issueToken({ userId: 'u' }),
    body: without(tokenResponse(), 'token'),
    path: ['token'],
  },
  {
    label: 'token with an empty token',
    method: 'post',
    route: `${API}/auth/token`,
    call: () => client.auth.issueToken({ userId: 'u' }),
    body: { ...tokenResponse(), token: '' },
    path: ['token'],
  },
  {
    label: 'token with user.id a number',
    method: 'post',
    route: `${API}/auth/token`,
    call: () => client.auth.issueToken({ userId: 'u' }),
    body: { ...tokenResponse(), user: { id: 1, externalId: 'e', companyId: 'c' } },
    path: ['user', 'id'],
  },
  {
    label: 'token with agent.active a string',
    method: 'post',
    route: `${API}/auth/token`,
    call: () => client.auth.issueToken({ userId: 'u', agentId: 'a' }),
    body: { ...tokenResponse(), agent: { id: 'a', name: 'n', active: 'yes' } },
    path: ['agent', 'active'],
  },
  {
    label: 'customer user without external_id',
    method: 'get',
    route: `${API}/customer-users`,
    call: () => client.customerUsers.list(),
    body: listBody([without(customerUser(1), 'external_id')]),
    path: ['data', 0, 'external_id'],
  },
  {
    label: 'customer user with active "true"',
    method: 'get',
    route: `${API}/customer-users`,
    call: () => client.customerUsers.list(),
    body: listBody([customerUser(1), { ...customerUser(2), active: 'true' }]),
    path: ['data', 1, 'active'],
  },
  {
    label: 'update without updated_at',
    method: 'put',
    route: `${API}/customer-users/cu-1`,
    call: () => client.customerUsers.update('cu-1', { name: 'n' }),
    body: without(updatedUser(), 'updated_at'),
    path: ['updated_at'],
  },
  {
    label: 'update with metadata an array',
    method: 'put',
    route: `${API}/customer-users/cu-1`,
    call: () => client.customerUsers.update('cu-1', { name: 'n' }),
    body: { ...updatedUser(), metadata: [1] },
    path: ['metadata'],
  },
  {
    label: 'agent without name',
    method: 'get',
    route: `${API}/agents`,
    call: () => client.agents.list(),
    body: listBody([without(agent(1), 'name')]),
    path: ['data', 0, 'name'],
  },
  {
    label: 'agents data not an array',
    method: 'get',
    route: `${API}/agents`,
    call: () => client.agents.list(),
    body: { data: {}, pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } },
    path: ['data'],
  },
  {
    label: 'agents without pagination',
    method: 'get',
    route: `${API}/agents`,
    call: () => client.agents.list(),
    body: { data: [agent(1)] },
    path: ['pagination'],
  },
  {
    label: 'conversation with message_count a string',
    method: 'get',
    route: `${API}/conversations`,
    call: () => client.conversations.list(),
    body: listBody([{ ...conversation(1), message_count: '3' }]),
    path: ['data', 0, 'message_count'],
  },
  {
    label: 'message without content',
    method: 'get',
    route: `${API}/conversations/conv-1/messages`,
    call: () => client.conversations.messages.list('conv-1'),
    body: listBody([without(message(1), 'content')], 1, 50, 1, { conversation: convo }),
    path: ['data', 0, 'content'],
  },
  {
    label: 'messages without conversation',
    method: 'get',
    route: `${API}/conversations/conv-1/messages`,
    call: () => client.conversations.messages.list('conv-1'),
    body: listBody([message(1)], 1, 50, 1),
    path: ['conversation'],
  },
  {
    label: 'messages with conversation.title a number',
    method: 'get',
    route: `${API}/conversations/conv-1/messages`,
    call: () => client.conversations.messages.list('conv-1'),
    body: listBody([message(1)], 1, 50, 1, { conversation: { id: 'conv-1', title: 7 } }),
    path: ['conversation', 'title'],
  },
]

describe('schema-breaking responses → ResponseValidationError with issues, status and raw body', () => {
  it.each(cases)('$label', async ({ method, route, call, body, path }) => {
    msw.use(http[method](route, () => HttpResponse.json(body as Record<string, unknown>, { headers: { 'x-request-id': 'r-9' } })))
    const error = await rejection(call())
    expect(error).toBeInstanceOf(ResponseValidationError)
    const rve = error as ResponseValidationError
    expect(rve.issues.map((issue) => issue.path)).toContainEqual(path)
    expect(rve.status).toBe(200)
    const token = (body as { token?: unknown }).token
    if (typeof token === 'string' && token !== '') {
      // The token of a token-issuance response is a secret: the raw body is kept with it scrubbed.
      expect(rve.body).toEqual({ ...(body as object), token: expect.any(String) as unknown })
      expect(JSON.stringify(rve.body)).not.toContain(token)
    } else {
      expect(rve.body).toEqual(body)
    }
    expect(rve.headers['x-request-id']).toBe('r-9')
    expect(rve.method).toBe(method.toUpperCase())
    expect(rve.path.split('?')[0]).toBe(new URL(route).pathname)
    expect(rve.message).toContain(path.join('.'))
  })

  it.each([
    ['null', null],
    ['an array', [1, 2]],
    ['a number', 42],
    ['a string', 'hello'],
  ])('a JSON body that is %s', async (_label, body) => {
    msw.use(http.get(`${API}/agents`, () => HttpResponse.json(body)))
    const error = await rejection(client.agents.list())
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect((error as ResponseValidationError).body).toEqual(body)
  })
})

describe('a 200 whose body is not JSON', () => {
  it.each([
    ['agents.list', 'get', `${API}/agents`, () => client.agents.list()],
    ['customerUsers.update', 'put', `${API}/customer-users/cu-1`, () => client.customerUsers.update('cu-1', { name: 'n' })],
    ['auth.issueToken', 'post', `${API}/auth/token`, () => client.auth.issueToken({ userId: 'u' })],
    ['conversations.messages.list', 'get', `${API}/conversations/conv-1/messages`, () => client.conversations.messages.list('conv-1')],
  ] as const)('%s → ResponseValidationError keeping the text', async (_name, method, route, call) => {
    const text = '<html><body>Gateway says hello</body></html>'
    msw.use(http[method](route, () => new HttpResponse(text, { status: 200, headers: { 'content-type': 'text/html' } })))
    const error = await rejection(call())
    expect(error).toBeInstanceOf(ResponseValidationError)
    const rve = error as ResponseValidationError
    expect(rve.body).toBe(text)
    expect(rve.status).toBe(200)
    expect(rve.issues.length).toBeGreaterThan(0)
    expect(rve.headers['content-type']).toBe('text/html')
  })

  it('truncated JSON keeps the text', async () => {
    msw.use(
      http.get(`${API}/agents`, () => new HttpResponse('{"data":[', { status: 200, headers: { 'content-type': 'application/json' } })),
    )
    const error = await rejection(client.agents.list())
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect((error as ResponseValidationError).body).toBe('{"data":[')
  })

  it('an empty 200 body', async () => {
    msw.use(http.get(`${API}/agents`, () => new HttpResponse(null, { status: 200 })))
    const error = await rejection(client.agents.list())
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect((error as ResponseValidationError).status).toBe(200)
  })
})

describe('redirects are not followed (the credentials travel in the body)', () => {
  const elsewhere = 'https://elsewhere.test'

  it.each([
    [301, 'get'],
    [302, 'get'],
    [303, 'put'],
    [307, 'post'],
    [308, 'post'],
  ] as const)('%i on %s → APIError; the server at Location gets nothing', async (status, method) => {
    let reachedElsewhere = 0
    msw.use(
      http.all(`${elsewhere}/*`, () => {
        reachedElsewhere++
        return HttpResponse.json(tokenResponse())
      }),
    )
    const route = method === 'get' ? `${API}/agents` : method === 'put' ? `${API}/customer-users/cu-1` : `${API}/auth/token`
    msw.use(http[method](route, () => new HttpResponse(null, { status, headers: { location: `${elsewhere}/rest/v1/steal` } })))
    const call =
      method === 'get'
        ? client.agents.list()
        : method === 'put'
          ? client.customerUsers.update('cu-1', { name: 'n' })
          : client.auth.issueToken({ userId: 'u' })

    const error = await rejection(call)

    expect(error).toBeInstanceOf(APIError)
    expect((error as APIError).status).toBe(status)
    expect((error as APIError).headers['location']).toBe(`${elsewhere}/rest/v1/steal`)
    await new Promise((resolve) => setImmediate(resolve))
    expect(reachedElsewhere).toBe(0)
    expect(msw.count()).toBe(1)
  })
})
