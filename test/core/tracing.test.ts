/**
 * Tracing (0.2): every operation call is published once on the `node:diagnostics_channel` tracing
 * channel TRACING_CHANNEL (`chat-service-sdk:request`): one start and one asyncEnd per call (a
 * retried call is one operation with `attempts: 2`), a context with operation, method, path,
 * attempts, status, requestId and outcome, an `error` event with the SDK error on failure, and
 * never a secret in any context of any event (checked with JSON.stringify and util.inspect at the
 * moment each event is published).
 */
import { tracingChannel } from 'node:diagnostics_channel'
import { inspect } from 'node:util'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ChatServiceClient, NotFoundError, TRACING_CHANNEL, type RequestTrace, APIConnectionError } from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, agent, conversation, message, tokenResponse, updatedUser } from '../helpers/fixtures.ts'
import { pageOf, rejection, startLoopback, targetOf, type LoopbackServer } from '../helpers/loopback.ts'

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.dHJhY2luZy10b2tlbi1wYXlsb2Fk.dHJhY2Utc2lnbmF0dXJl'

type EventName = 'start' | 'end' | 'asyncStart' | 'asyncEnd' | 'error'

/** One published event: its name, the context object, and how it rendered at that moment. */
interface Published {
  readonly name: EventName
  readonly context: RequestTrace
  readonly json: string
  readonly inspected: string
  /** A copy of the context's own fields at that moment. */
  readonly snapshot: Record<string, unknown>
}

const channel = tracingChannel<unknown, RequestTrace>(TRACING_CHANNEL)
let events: Published[] = []
const record =
  (name: EventName) =>
  (message: unknown): void => {
    const context = message as RequestTrace
    events.push({
      name,
      context,
      json: JSON.stringify(context),
      inspected: inspect(context, { depth: 10, showHidden: true }),
      snapshot: { ...context },
    })
  }
const subscribers = {
  start: record('start'),
  end: record('end'),
  asyncStart: record('asyncStart'),
  asyncEnd: record('asyncEnd'),
  error: record('error'),
}

let server: LoopbackServer
let client: ChatServiceClient

beforeAll(async () => {
  server = await startLoopback()
  channel.subscribe(subscribers)
})
afterAll(async () => {
  channel.unsubscribe(subscribers)
  await server.close()
})
beforeEach(() => {
  server.clear()
  events = []
  server.respond((request) => {
    const { pathname } = targetOf(request)
    const page = pageOf(request)
    if (request.method === 'POST') return { headers: { 'x-request-id': 'req_token' }, body: tokenResponse(TOKEN) }
    if (request.method === 'PUT') return { headers: { 'x-request-id': 'req_put' }, body: updatedUser() }
    if (pathname.endsWith('/messages')) {
      return {
        headers: { 'x-request-id': `req_msg_${page}` },
        body: {
          data: [message(page)],
          pagination: { page, limit: 1, total: 2, total_pages: 2 },
          conversation: { id: 'conv-1', title: 'T' },
        },
      }
    }
    if (pathname === '/rest/v1/conversations')
      return { body: { data: [conversation(1)], pagination: { page, limit: 20, total: 1, total_pages: 1 } } }
    return {
      headers: { 'x-request-id': `req_agents_${page}` },
      body: { data: [agent(page)], pagination: { page, limit: 1, total: 1, total_pages: 1 } },
    }
  })
  client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, logLevel: 'off' })
})
afterEach(async () => {
  await client.close()
})

function named(name: EventName): Published[] {
  return events.filter((event) => event.name === name)
}

/** No rendering of any context of any event so far holds a secret. */
function expectNoSecretInAnyEvent(...secrets: string[]): void {
  expect(events.length).toBeGreaterThan(0)
  for (const event of events) {
    for (const secret of secrets) {
      for (const form of new Set([secret, encodeURIComponent(secret)])) {
        expect(event.json, `${event.name} JSON`).not.toContain(form)
        expect(event.inspected, `${event.name} inspect`).not.toContain(form)
        // and now, after the call has settled (the context object is shared between events)
        expect(JSON.stringify(event.context)).not.toContain(form)
        expect(inspect(event.context, { depth: 10, showHidden: true })).not.toContain(form)
      }
    }
  }
}

describe('one traced operation per call', () => {
  it('exports the channel name', () => {
    expect(TRACING_CHANNEL).toBe('chat-service-sdk:request')
  })

  it('agents.list: one start and one asyncEnd, with operation, method, path, attempts, status, requestId and outcome', async () => {
    await client.agents.list({ limit: 1 })
    expect(named('start')).toHaveLength(1)
    expect(named('asyncEnd')).toHaveLength(1)
    expect(named('error')).toHaveLength(0)
    const [start] = named('start')
    const [end] = named('asyncEnd')
    expect(start?.snapshot).toMatchObject({ operation: 'agents.list', method: 'GET', path: '/rest/v1/agents?limit=1&page=1' })
    expect(start?.snapshot.outcome).toBeUndefined()
    expect(end?.context).toBe(start?.context)
    expect(end?.snapshot).toMatchObject({
      operation: 'agents.list',
      method: 'GET',
      path: '/rest/v1/agents?limit=1&page=1',
      attempts: 1,
      status: 200,
      requestId: 'req_agents_1',
      outcome: 'success',
    })
  })

  it.each([
    ['auth.issueToken', 'POST', '/rest/v1/auth/token', () => client.auth.issueToken({ userId: 'ext-1' })],
    ['customerUsers.update', 'PUT', '/rest/v1/customer-users/cu-1', () => client.customerUsers.update('cu-1', { name: 'n' })],
    ['customerUsers.list', 'GET', '/rest/v1/customer-users?page=1', () => client.customerUsers.list()],
    ['conversations.list', 'GET', '/rest/v1/conversations?page=1', () => client.conversations.list()],
    [
      'conversations.messages.list',
      'GET',
      '/rest/v1/conversations/conv-1/messages?limit=1&page=1',
      () => client.conversations.messages.list('conv-1', { limit: 1 }),
    ],
  ] as const)('%s is traced as one operation named so', async (operation, method, path, call) => {
    server.respond((request) =>
      request.method === 'POST'
        ? { body: tokenResponse(TOKEN) }
        : request.method === 'PUT'
          ? { body: updatedUser() }
          : targetOf(request).pathname.endsWith('/messages')
            ? {
                body: { data: [], pagination: { page: 1, limit: 1, total: 0, total_pages: 0 }, conversation: { id: 'conv-1', title: 'T' } },
              }
            : { body: { data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } } },
    )
    await call()
    expect(named('start').map((event) => event.snapshot)).toStrictEqual([{ operation, method, path, attempts: 0 }])
    const ends = named('asyncEnd').map((event) => event.snapshot)
    expect(ends).toMatchObject([{ operation, method, path, attempts: 1, status: 200, outcome: 'success' }])
    expect(ends[0]?.result).toBeUndefined() // the result (a token, for issueToken) is not published
  })

  it('iterating two pages of messages is two operations, each with its own page, status and requestId', async () => {
    const seen: unknown[] = []
    for await (const item of client.conversations.messages.list('conv-1', { limit: 1 })) seen.push(item)
    expect(seen).toHaveLength(2)
    const ends = named('asyncEnd').map((event) => event.snapshot)
    expect(ends).toHaveLength(2)
    expect(ends.map((end) => end.operation)).toStrictEqual(['conversations.messages.list', 'conversations.messages.list'])
    expect(ends.map((end) => end.requestId)).toStrictEqual(['req_msg_1', 'req_msg_2'])
    expect(ends.map((end) => targetOf({ target: String(end.path) }).query.get('page'))).toStrictEqual(['1', '2'])
  })

  it('a retried call is ONE operation with attempts: 2', async () => {
    let calls = 0
    server.respond(() => {
      calls++
      return calls === 1
        ? { status: 503, headers: { 'retry-after-ms': '0', 'x-request-id': 'req_busy' }, body: 'busy' }
        : {
            headers: { 'x-request-id': 'req_ok' },
            body: { data: [agent(1)], pagination: { page: 1, limit: 20, total: 1, total_pages: 1 } },
          }
    })
    await client.agents.list()
    expect(server.arrivals).toHaveLength(2)
    expect(named('start')).toHaveLength(1)
    expect(named('asyncEnd')).toHaveLength(1)
    expect(named('asyncEnd')[0]?.snapshot).toMatchObject({
      operation: 'agents.list',
      attempts: 2,
      status: 200,
      requestId: 'req_ok',
      outcome: 'success',
    })
  })
})

describe('failures', () => {
  it('an APIError: an error event carrying the SDK error, then asyncEnd with outcome error, status and requestId', async () => {
    server.respond(() => ({ status: 404, headers: { 'x-request-id': 'req_missing' }, body: { error: 'no such user' } }))
    const error = await rejection(client.customerUsers.update('cu-x', { name: 'n' }))
    expect(error).toBeInstanceOf(NotFoundError)
    expect(events.map((event) => event.name)).toStrictEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd'])
    const failed = named('error')[0]
    expect(failed?.context.error).toBe(error)
    expect(named('asyncEnd')[0]?.snapshot).toMatchObject({
      operation: 'customerUsers.update',
      method: 'PUT',
      path: '/rest/v1/customer-users/cu-x',
      attempts: 1,
      status: 404,
      requestId: 'req_missing',
      outcome: 'error',
    })
  })

  it('a connection failure after retries: attempts counts every attempt, no status', async () => {
    server.respond(() => 'destroy')
    const error = await rejection(client.withOptions({ maxRetries: 1 }).agents.list())
    expect(error).toBeInstanceOf(APIConnectionError)
    expect(server.arrivals).toHaveLength(2)
    expect(named('error')).toHaveLength(1)
    expect(named('error')[0]?.context.error).toBe(error)
    const end = named('asyncEnd')[0]?.snapshot
    expect(end).toMatchObject({ operation: 'agents.list', attempts: 2, outcome: 'error' })
    expect(end?.status).toBeUndefined()
  })
})

describe('no secret in any context', () => {
  it('issueToken (whose result holds the token), then calls that carry the token and the key secret where an id goes', async () => {
    await client.auth.issueToken({ userId: 'ext-1', agentId: 'agent-2' })
    server.respond((request) => ({
      status: 404,
      headers: { 'x-request-id': 'req_echo', 'x-echo': request.target },
      body: { error: `not found: ${decodeURIComponent(request.target)}`, body: request.body },
    }))
    await rejection(client.conversations.messages.list(TOKEN))
    await rejection(client.customerUsers.update(KEY_SECRET, { name: 'n' }))
    await rejection(client.conversations.messages.list(KEY_SECRET, { limit: 5 }))
    expect(named('start')).toHaveLength(4)
    expect(named('error')).toHaveLength(3)
    expect(server.arrivals.some((arrival) => arrival.target.includes(TOKEN))).toBe(true) // they did travel in the path
    expect(named('asyncEnd')[1]?.snapshot.path).toBe('/rest/v1/conversations/[REDACTED]/messages?page=1')
    expect(named('asyncEnd')[2]?.snapshot.path).toBe('/rest/v1/customer-users/[REDACTED]')
    expectNoSecretInAnyEvent(KEY_SECRET, TOKEN)
  })

  it('a key secret that needs percent-encoding, passed as an id, is not in any context either', async () => {
    const secret = 'ks+live/Q9v=X3 mR7€ü'
    const odd = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: secret, maxRetries: 0, logLevel: 'off' })
    try {
      server.respond(() => ({ status: 404, body: { error: 'not found' } }))
      await rejection(odd.customerUsers.update(secret, { name: 'n' }))
      expect(server.arrivals.at(-1)?.target).toBe(`/rest/v1/customer-users/${encodeURIComponent(secret)}`)
      expectNoSecretInAnyEvent(secret)
    } finally {
      await odd.close()
    }
  })
})
