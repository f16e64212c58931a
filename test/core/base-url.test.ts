/** Base-URL forms: exactly one /rest/v1 prefix on every request; bad URLs refused at construction. */
import { http, HttpResponse } from 'msw'
import { describe, expect, it } from 'vitest'
import { ChatServiceClient, RequestValidationError, type ClientOptions } from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, emptyListFor, tokenResponse, updatedUser } from '../helpers/fixtures.ts'
import { setupMsw } from '../helpers/msw.ts'

const msw = setupMsw()

/** Answers every request to `origin` plausibly, whatever the path (so a wrong path is visible, not a 404). */
function serveAnything(origin: string): void {
  msw.use(
    http.all(`${origin}/*`, ({ request }) => {
      const { pathname } = new URL(request.url)
      if (request.method === 'POST') return HttpResponse.json(tokenResponse())
      if (request.method === 'PUT') return HttpResponse.json(updatedUser())
      return HttpResponse.json(emptyListFor(pathname))
    }),
  )
}

async function callEveryEndpoint(client: ChatServiceClient): Promise<void> {
  await client.auth.issueToken({ userId: 'u' })
  await client.customerUsers.list()
  await client.customerUsers.update('cu-1', { name: 'n' })
  await client.agents.list()
  await client.conversations.list()
  await client.conversations.messages.list('conv-1')
}

function refused(options: unknown): RequestValidationError {
  let thrown: unknown
  try {
    new ChatServiceClient(options as ClientOptions)
  } catch (error) {
    thrown = error
  }
  expect(thrown).toBeInstanceOf(RequestValidationError)
  return thrown as RequestValidationError
}

describe('accepted forms', () => {
  it.each([
    ['https://chat.test', ''],
    ['https://chat.test/', ''],
    ['https://chat.test/rest/v1', ''],
    ['https://chat.test/rest/v1/', ''],
    ['https://chat.test/chat', '/chat'],
    ['https://chat.test/chat/', '/chat'],
    ['https://chat.test/chat/rest/v1', '/chat'],
    ['https://chat.test/chat/rest/v1/', '/chat'],
    ['https://chat.test:8443/rest/v1', ''],
    ['http://localhost:3000', ''],
    ['http://127.0.0.1:3000/rest/v1/', ''],
  ])('%s → every request under %s/rest/v1/ exactly once', async (baseUrl, prefix) => {
    const origin = new URL(baseUrl).origin
    serveAnything(origin)
    const client = new ChatServiceClient({ baseUrl, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0 })
    try {
      await callEveryEndpoint(client)
    } finally {
      await client.close()
    }
    const requests = await msw.requests()
    expect(requests.map((request) => request.url.pathname)).toEqual([
      `${prefix}/rest/v1/auth/token`,
      `${prefix}/rest/v1/customer-users`,
      `${prefix}/rest/v1/customer-users/cu-1`,
      `${prefix}/rest/v1/agents`,
      `${prefix}/rest/v1/conversations`,
      `${prefix}/rest/v1/conversations/conv-1/messages`,
    ])
    for (const request of requests) {
      expect(request.url.origin).toBe(origin)
      expect(request.url.pathname.split('/rest/v1').length).toBe(2)
      expect(request.url.pathname).not.toContain('/v1/v1')
      expect(request.url.pathname).not.toContain('//')
    }
  })

  it('http: on a non-loopback host works with allowInsecureHttp: true', async () => {
    serveAnything('http://chat.example.com')
    const client = new ChatServiceClient({
      baseUrl: 'http://chat.example.com',
      keyId: KEY_ID,
      keySecret: KEY_SECRET,
      allowInsecureHttp: true,
    })
    try {
      await client.agents.list()
    } finally {
      await client.close()
    }
    expect((await msw.requests()).map((request) => request.url.href)).toEqual([
      expect.stringMatching(/^http:\/\/chat\.example\.com\/rest\/v1\/agents(\?|$)/),
    ])
  })
})

describe('refused at construction (RequestValidationError, nothing sent)', () => {
  const ok = { keyId: KEY_ID, keySecret: KEY_SECRET }

  it.each(['https://chat.test/rest/v1/v1', 'https://chat.test/rest/v1/v1/', 'https://chat.test/chat/rest/v1/v1'])(
    'the doubled prefix %s',
    (baseUrl) => {
      const error = refused({ ...ok, baseUrl })
      expect(error.issues.map((issue) => issue.path)).toContainEqual(['baseUrl'])
    },
  )

  it.each(['ftp://chat.test', 'file:///etc/passwd', 'ws://chat.test', 'mailto:a@b.c', 'chat.test', '/rest/v1', 'not a url', 'https://'])(
    'a baseUrl that is not an http(s) URL: %s',
    (baseUrl) => {
      const error = refused({ ...ok, baseUrl })
      expect(error.issues.map((issue) => issue.path)).toContainEqual(['baseUrl'])
    },
  )

  it.each([
    ['empty baseUrl', { ...ok, baseUrl: '' }, 'baseUrl'],
    ['missing baseUrl', { ...ok }, 'baseUrl'],
    ['empty keyId', { baseUrl: 'https://chat.test', keyId: '', keySecret: KEY_SECRET }, 'keyId'],
    ['missing keyId', { baseUrl: 'https://chat.test', keySecret: KEY_SECRET }, 'keyId'],
    ['empty keySecret', { baseUrl: 'https://chat.test', keyId: KEY_ID, keySecret: '' }, 'keySecret'],
    ['missing keySecret', { baseUrl: 'https://chat.test', keyId: KEY_ID }, 'keySecret'],
    ['non-string keySecret', { baseUrl: 'https://chat.test', keyId: KEY_ID, keySecret: 42 }, 'keySecret'],
  ])('%s', (_label, options, field) => {
    const error = refused(options)
    expect(error.issues.map((issue) => issue.path)).toContainEqual([field])
    expect(error.message).toContain(field)
  })

  it('every missing option is listed at once', () => {
    const error = refused({})
    const paths = error.issues.map((issue) => issue.path)
    expect(paths).toContainEqual(['baseUrl'])
    expect(paths).toContainEqual(['keyId'])
    expect(paths).toContainEqual(['keySecret'])
  })

  it('no options at all', () => {
    refused(undefined)
  })

  it.each([
    'http://chat.example.com',
    'http://10.0.0.5/rest/v1',
    'http://chat.example.com:8080/',
    'http://127.0.0.1.example.com',
    'http://[::2]:3000',
    'http://localhost.example.com',
  ])('http: on a non-loopback host %s without allowInsecureHttp', (baseUrl) => {
    const error = refused({ ...ok, baseUrl })
    expect(error.issues.map((issue) => issue.path)).toContainEqual(['baseUrl'])
  })

  it.each(['http://[::1]:3000', 'http://127.1.2.3:3000', 'http://api.localhost', 'http://LOCALHOST:3000/rest/v1'])(
    'http: on the loopback host %s needs no allowInsecureHttp',
    async (baseUrl) => {
      const client = new ChatServiceClient({ ...ok, baseUrl })
      await client.close()
    },
  )

  it('a baseUrl with credentials, a query or a fragment', () => {
    refused({ ...ok, baseUrl: 'https://user:pass@chat.test' })
    refused({ ...ok, baseUrl: 'https://chat.test/?x=1' })
    refused({ ...ok, baseUrl: 'https://chat.test/#frag' })
  })

  it('nothing reached the network', () => {
    expect(msw.count()).toBe(0)
  })
})

describe('a baseUrl with /rest/v1 in the middle of its path', () => {
  // Not a documented form (an origin, or ending in /rest/v1). Either refuse it at construction, or
  // still send exactly one /rest/v1 and never /rest/v1/v1/.
  it.each(['https://chat.test/rest/v1/agents', 'https://chat.test/rest/v1/v1/chat'])(
    '%s is refused, or still yields exactly one /rest/v1',
    async (baseUrl) => {
      let client: ChatServiceClient
      try {
        client = new ChatServiceClient({ baseUrl, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0 })
      } catch (error) {
        expect(error).toBeInstanceOf(RequestValidationError)
        return
      }
      serveAnything('https://chat.test')
      try {
        await client.agents.list()
      } finally {
        await client.close()
      }
      const [request] = await msw.requests()
      expect(request?.url.pathname.split('/rest/v1').length).toBe(2)
      expect(request?.url.pathname).not.toContain('/rest/v1/v1/')
    },
  )
})

describe('client.baseUrl', () => {
  it.each([
    ['https://chat.test', 'https://chat.test/rest/v1'],
    ['https://chat.test/rest/v1/', 'https://chat.test/rest/v1'],
    ['https://chat.test/chat/', 'https://chat.test/chat/rest/v1'],
  ])('%s → %s', async (baseUrl, expected) => {
    const client = new ChatServiceClient({ baseUrl, keyId: KEY_ID, keySecret: KEY_SECRET })
    expect(client.baseUrl).toBe(expected)
    await client.close()
  })
})
