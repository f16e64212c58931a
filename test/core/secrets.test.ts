/**
 * The key secret and issued tokens never show in an error (String, message, util.inspect with
 * hidden fields, JSON.stringify) nor in the client, even when the service echoes them back.
 * Uses a plain node:http server on 127.0.0.1, so that it can echo raw requests and drop sockets.
 */
import { inspect } from 'node:util'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  APIConnectionError,
  AuthenticationError,
  ChatServiceClient,
  InternalServerError,
  RequestValidationError,
  ResponseValidationError,
  type Logger,
} from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, agent, tokenResponse } from '../helpers/fixtures.ts'
import { startWireServer, type WireServer } from '../helpers/wire.ts'

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXRva2VuLXBheWxvYWQ.Zm9vYmFyYmF6cXV4'

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
  client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0 })
})
afterEach(async () => {
  await client.close()
})

/** `JSON.stringify` typed as it behaves: `undefined` for `undefined`, a function or a symbol. */
const stringify = (value: unknown): string | undefined => JSON.stringify(value)

/** Every way a user might render an error (or any value) for a log. */
function renderings(value: unknown): Record<string, string> {
  const out: Record<string, string> = {
    'String()': String(value),
    'util.inspect(showHidden, depth 10)': inspect(value, { depth: 10, showHidden: true }),
    'util.inspect()': inspect(value),
    'JSON.stringify()': stringify(value) ?? '',
  }
  if (value instanceof Error) {
    out['message'] = value.message
    out['stack'] = value.stack ?? ''
  }
  return out
}

function expectHidden(value: unknown, ...secrets: string[]): void {
  for (const [how, text] of Object.entries(renderings(value))) {
    for (const secret of secrets) expect(text, `${how} shows a secret`).not.toContain(secret)
  }
}

async function rejection(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected a rejection')
}

describe('API errors', () => {
  it('a JSON error body, header and message that echo the key secret', async () => {
    server.respond((request) => ({
      status: 401,
      headers: { 'x-echo': KEY_SECRET, 'www-authenticate': `Key secret="${KEY_SECRET}"` },
      body: { error: `invalid key secret ${KEY_SECRET}`, request: JSON.parse(request.body) as unknown, [KEY_SECRET]: true },
    }))
    const error = await rejection(client.agents.list())
    expect(error).toBeInstanceOf(AuthenticationError)
    // The server really echoed it (the test would be empty otherwise).
    expect(server.requests[0]?.body).toContain(KEY_SECRET)
    expectHidden(error, KEY_SECRET)
    const apiError = error as AuthenticationError
    expect(JSON.stringify(apiError.body)).toContain('invalid key secret')
    expect(JSON.stringify(apiError.body)).toContain(KEY_ID)
    expect(JSON.stringify(apiError.headers)).not.toContain(KEY_SECRET)
  })

  it('a text error body that echoes the raw request', async () => {
    server.respond((request) => ({ status: 500, headers: { 'content-type': 'text/plain' }, body: `crashed on ${request.body}` }))
    const error = await rejection(client.customerUsers.update('cu-1', { name: 'n' }))
    expect(error).toBeInstanceOf(InternalServerError)
    expect(String((error as InternalServerError).body)).toContain('crashed on')
    expectHidden(error, KEY_SECRET)
  })

  it('on token issuance too', async () => {
    server.respond((request) => ({ status: 400, body: { echo: request.body } }))
    const error = await rejection(client.auth.issueToken({ userId: 'u' }))
    expectHidden(error, KEY_SECRET)
  })
})

describe('connection errors', () => {
  it('the server destroys the socket: APIConnectionError with its cause, no secret anywhere', async () => {
    server.respond(() => 'destroy')
    const error = await rejection(client.customerUsers.list({ external_id: 'x' }))
    expect(error).toBeInstanceOf(APIConnectionError)
    expect((error as APIConnectionError).cause).toBeDefined()
    expect(server.requests[0]?.body).toContain(KEY_SECRET)
    expectHidden(error, KEY_SECRET)
  })

  it('nothing listens on the port', async () => {
    const closed = await startWireServer()
    const origin = closed.origin
    await closed.close()
    const orphan = new ChatServiceClient({ baseUrl: origin, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0 })
    try {
      const error = await rejection(orphan.agents.list())
      expect(error).toBeInstanceOf(APIConnectionError)
      expect((error as APIConnectionError).cause).toBeDefined()
      expectHidden(error, KEY_SECRET)
    } finally {
      await orphan.close()
    }
  })
})

describe('validation errors', () => {
  it('ResponseValidationError whose body echoes the secret', async () => {
    server.respond((request) => ({
      status: 200,
      body: {
        data: [{ ...agent(1), name: 5, note: KEY_SECRET }],
        pagination: { page: 1, limit: 20, total: 1, total_pages: 1 },
        echo: request.body,
      },
    }))
    const error = await rejection(client.agents.list())
    expect(error).toBeInstanceOf(ResponseValidationError)
    expectHidden(error, KEY_SECRET)
  })

  it('ResponseValidationError whose headers echo the secret', async () => {
    server.respond(() => ({
      status: 200,
      headers: { 'x-echo': KEY_SECRET },
      body: { data: 'not an array', pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } },
    }))
    const error = await rejection(client.agents.list())
    expect(error).toBeInstanceOf(ResponseValidationError)
    expectHidden(error, KEY_SECRET)
  })

  it('a body over maxResponseBytes, with headers that echo the secret', async () => {
    const small = new ChatServiceClient({
      baseUrl: server.origin,
      keyId: KEY_ID,
      keySecret: KEY_SECRET,
      maxRetries: 0,
      maxResponseBytes: 64,
    })
    try {
      server.respond(() => ({
        status: 200,
        headers: { 'x-echo': KEY_SECRET },
        body: { data: Array.from({ length: 20 }, (_, i) => agent(i)), pagination: { page: 1, limit: 20, total: 20, total_pages: 1 } },
      }))
      const error = await rejection(small.agents.list())
      expect(error).toBeInstanceOf(ResponseValidationError)
      expectHidden(error, KEY_SECRET)
    } finally {
      await small.close()
    }
  })

  it('a 200 that is not JSON and echoes the secret', async () => {
    server.respond((request) => ({
      status: 200,
      headers: { 'content-type': 'text/plain', 'x-echo': KEY_SECRET },
      body: `you sent ${request.body}`,
    }))
    const error = await rejection(client.agents.list())
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect(String((error as ResponseValidationError).body)).toContain('you sent')
    expectHidden(error, KEY_SECRET)
  })

  it('RequestValidationError of a method', async () => {
    const error = await rejection(client.customerUsers.update('cu-1', { metadata: { note: KEY_SECRET, when: new Date(0) } }))
    expect(error).toBeInstanceOf(RequestValidationError)
    expectHidden(error, KEY_SECRET)
    expect(server.requests).toHaveLength(0)
  })

  it.each([
    ['a bad baseUrl', { baseUrl: 'ftp://chat.test', keyId: KEY_ID, keySecret: KEY_SECRET }],
    ['an http: non-loopback baseUrl', { baseUrl: 'http://chat.example.com', keyId: KEY_ID, keySecret: KEY_SECRET }],
    ['an unknown option', { baseUrl: 'https://chat.test', keyId: KEY_ID, keySecret: KEY_SECRET, secret: KEY_SECRET }],
    ['a bad timeout', { baseUrl: 'https://chat.test', keyId: KEY_ID, keySecret: KEY_SECRET, timeout: -1 }],
    [
      'the secret as a header value with a line break',
      { baseUrl: 'https://chat.test', keyId: KEY_ID, keySecret: KEY_SECRET, headers: { 'x-k': `${KEY_SECRET}\n` } },
    ],
  ])('RequestValidationError of the constructor: %s', (_label, options) => {
    let error: unknown
    try {
      new ChatServiceClient(options)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(RequestValidationError)
    expectHidden(error, KEY_SECRET)
  })
})

describe('the client', () => {
  it('util.inspect, JSON.stringify and String never show the key secret', () => {
    expectHidden(client, KEY_SECRET)
    expect(inspect(client, { depth: 10, showHidden: true })).toContain(KEY_ID)
    // The same safe view as toJSON, named (not the object's own fields, whatever they hold).
    expect(inspect(client)).toBe(`ChatServiceClient ${inspect(client.toJSON())}`)
    for (const part of [client.auth, client.agents, client.customerUsers, client.conversations, client.conversations.messages])
      expectHidden(part, KEY_SECRET)
  })

  it('nor a token it issued', async () => {
    server.respond(() => ({ body: tokenResponse(TOKEN) }))
    const result = await client.auth.issueToken({ userId: 'u' })
    expect(result.token).toBe(TOKEN)
    expectHidden(client, KEY_SECRET, TOKEN)
  })
})

describe('issued tokens', () => {
  it('a later error whose body, headers and message echo the token does not show it', async () => {
    server.respond(() => ({ body: tokenResponse(TOKEN) }))
    expect((await client.auth.issueToken({ userId: 'u' })).token).toBe(TOKEN)

    server.respond(() => ({ status: 401, headers: { 'x-token': TOKEN }, body: { error: `token ${TOKEN} is not a key`, token: TOKEN } }))
    const error = await rejection(client.conversations.list())
    expect(error).toBeInstanceOf(AuthenticationError)
    expectHidden(error, TOKEN, KEY_SECRET)
    expect(JSON.stringify((error as AuthenticationError).body)).toContain('is not a key')
  })

  it('a response read after the client issued 1,024 more tokens (and forgot the one it echoes) still does not show it', async () => {
    server.respond(() => ({ body: tokenResponse(TOKEN) }))
    await client.auth.issueToken({ userId: 'u' })
    server.respond(() => ({
      headers: { 'x-token': TOKEN, 'x-request-id': TOKEN },
      body: { data: [agent(1)], pagination: { page: 1, limit: 20, total: 1, total_pages: 1 } },
    }))
    const { response } = await client.agents.list().withResponse()
    // The client remembers its latest 1,024 tokens: these push the echoed one out before anything reads the response.
    let issued = 0
    server.respond(() => ({ body: tokenResponse(`tok_later_${String(++issued).padStart(6, '0')}_abcdefgh`) }))
    for (let n = 0; n < 1_024; n++) await client.auth.issueToken({ userId: 'u' })
    expectHidden(response, TOKEN)
    expect(response.headers['x-token']).toBe('[REDACTED]')
    expect(response.requestId).toBe('[REDACTED]')
  }, 60_000)

  it('a later ResponseValidationError whose body echoes the token does not show it', async () => {
    server.respond(() => ({ body: tokenResponse(TOKEN) }))
    await client.auth.issueToken({ userId: 'u' })
    server.respond(() => ({ body: { data: [{ id: TOKEN }], pagination: { page: 1, limit: 20, total: 1, total_pages: 1 } } }))
    const error = await rejection(client.agents.list())
    expect(error).toBeInstanceOf(ResponseValidationError)
    expectHidden(error, TOKEN)
  })

  it('a token-issuance response that fails validation does not show its token', async () => {
    server.respond(() => ({ body: { ...tokenResponse(TOKEN), user: 'broken' } }))
    const error = await rejection(client.auth.issueToken({ userId: 'u' }))
    expect(error).toBeInstanceOf(ResponseValidationError)
    expectHidden(error, TOKEN)
  })

  it('a non-200 token-issuance response carrying a token does not show it', async () => {
    server.respond(() => ({ status: 201, body: tokenResponse(TOKEN) }))
    const error = await rejection(client.auth.issueToken({ userId: 'u' }))
    expect((error as { status?: number }).status).toBe(201)
    expectHidden(error, TOKEN)
  })
})

describe('logs', () => {
  it('debug logs of failing and succeeding requests never show the key secret or a token', async () => {
    const lines: string[] = []
    const record = (...args: unknown[]): void => {
      lines.push(args.map((arg) => (typeof arg === 'string' ? arg : inspect(arg, { depth: 10, showHidden: true }))).join(' '))
    }
    const logger: Logger = { debug: record, info: record, warn: record, error: record }
    const logged = new ChatServiceClient({
      baseUrl: server.origin,
      keyId: KEY_ID,
      keySecret: KEY_SECRET,
      logger,
      logLevel: 'debug',
      maxRetries: 1,
    })
    try {
      server.respond(() => ({ body: tokenResponse(TOKEN) }))
      await logged.auth.issueToken({ userId: 'u' })
      server.respond((request) => ({
        status: 503,
        headers: { 'retry-after-ms': '0', 'x-echo': KEY_SECRET },
        body: { echo: request.body, token: TOKEN },
      }))
      await rejection(logged.agents.list())
    } finally {
      await logged.close()
    }
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) {
      expect(line).not.toContain(KEY_SECRET)
      expect(line).not.toContain(TOKEN)
    }
  })
})
