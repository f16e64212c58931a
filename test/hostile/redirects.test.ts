/**
 * A caller's dispatcher never carries the key to another origin (issue 19). The credentials travel
 * in the body of every request, so a redirect followed is the key sent wherever the `Location`
 * says. The SDK's own pool follows none; a `dispatcher` of yours may be composed with undici's
 * redirect interceptor (`new Agent().compose(interceptors.redirect({ maxRedirections: 5 }))`),
 * which re-sends a 307/308 with its body (the key) and follows 301/302/303 with a GET. The SDK
 * tells undici, per request, that redirects are not followed (`maxRedirections: 0`), so a 3xx is
 * the answer: an `APIError` with its status, saying that the redirect was not followed and where
 * it pointed (secrets scrubbed), never retried; the other origin receives nothing.
 */
import { inspect } from 'node:util'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Agent, interceptors, RedirectHandler, type Dispatcher } from 'undici'
import { APIConnectionError, APIError, ChatServiceClient } from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, agent, pagination, updatedUser } from '../helpers/fixtures.ts'
import { rejection, until } from '../helpers/loopback.ts'
import { DESTROY, json, response, startHostileServer, type HostileServer, useProcessGuard } from './hostile-server.ts'

/** The service, answering every request with a redirect to `elsewhere`. */
let service: HostileServer
/** The other origin: records anything it receives, and answers as the service would (so a followed redirect would succeed). */
let elsewhere: HostileServer
// Around each test, after this file's own hooks: no uncaught error, unhandled rejection or pollution.
useProcessGuard()
const dispatchers: Dispatcher[] = []
const clients: ChatServiceClient[] = []

const agentsPage = (): Record<string, unknown> => ({ data: [agent(666)], pagination: pagination(1, 20, 1) })

beforeAll(async () => {
  service = await startHostileServer()
  elsewhere = await startHostileServer((request) => json(200, request.method === 'GET' ? agentsPage() : updatedUser('cu-1')))
})
afterAll(async () => {
  await service.close()
  await elsewhere.close()
})
beforeEach(() => {
  service.clear()
  elsewhere.clear()
})
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close()
  for (const dispatcher of dispatchers.splice(0)) await dispatcher.close()
  await until(() => service.open === 0 && elsewhere.open === 0)
})

/** A client over `dispatcher` (the caller's), default retries. */
function clientWith(dispatcher: Dispatcher | undefined): ChatServiceClient {
  if (dispatcher !== undefined) dispatchers.push(dispatcher)
  const client = new ChatServiceClient({ baseUrl: service.origin, keyId: KEY_ID, keySecret: KEY_SECRET, dispatcher })
  clients.push(client)
  return client
}

const dispatcherKinds: [string, () => Dispatcher | undefined][] = [
  [
    "a caller's Agent composed with interceptors.redirect({ maxRedirections: 5 })",
    () => new Agent().compose(interceptors.redirect({ maxRedirections: 5 })),
  ],
  [
    'the same, with throwOnMaxRedirect and stripping nothing',
    () =>
      new Agent().compose(interceptors.redirect({ maxRedirections: 5, throwOnMaxRedirect: true, stripHeadersOnCrossOriginRedirect: [] })),
  ],
  ["a caller's plain Agent", () => new Agent()],
  ["the SDK's own pool", () => undefined],
]

const calls: [string, (client: ChatServiceClient) => Promise<unknown>, string][] = [
  ['GET agents.list', (client) => client.agents.list(), 'GET'],
  ['PUT customerUsers.update', (client) => client.customerUsers.update('cu-1', { name: 'n' }), 'PUT'],
]

describe.each(dispatcherKinds)('%s', (_kind, makeDispatcher) => {
  describe.each(calls)('%s', (_call, call, method) => {
    it.each([301, 302, 303, 307, 308])('a %i to another origin: the other origin receives nothing, an APIError says so', async (status) => {
      // The Location carries the key secret too (a server echoing what it read): it is shown scrubbed.
      const location = `${elsewhere.origin}/rest/v1/steal?k=${KEY_SECRET}`
      service.respond(() => response(status, { location, 'x-request-id': 'req-3xx' }, ''))
      const client = clientWith(makeDispatcher())

      const error = await rejection(call(client))

      expect(elsewhere.requests).toEqual([])
      expect(error).toBeInstanceOf(APIError)
      const apiError = error as APIError
      expect(apiError.status).toBe(status)
      expect(apiError.method).toBe(method)
      expect(apiError.requestId).toBe('req-3xx')
      expect(apiError.retryable).toBe(false)
      expect(apiError.message).toContain('redirect not followed')
      expect(apiError.message).toContain(`location: ${elsewhere.origin}/rest/v1/steal?k=[REDACTED]`)
      expect(apiError.headers['location']).toBe(`${elsewhere.origin}/rest/v1/steal?k=[REDACTED]`)
      for (const text of [apiError.message, apiError.stack ?? '', inspect(apiError, { depth: Infinity }), JSON.stringify(apiError)]) {
        expect(text).not.toContain(KEY_SECRET)
      }
      // Asked once, never retried (a redirect answers the same every time).
      expect(service.requests).toHaveLength(1)
      expect(service.requests[0]?.method).toBe(method)
    })
  })

  it('a redirect to the same origin is not followed either (the key is sent once per call)', async () => {
    service.respond((request) =>
      request.target.startsWith('/moved')
        ? json(200, agentsPage())
        : response(307, { location: `${service.origin}/moved/rest/v1/agents` }, ''),
    )
    const error = await rejection(clientWith(makeDispatcher()).agents.list())
    expect(error).toBeInstanceOf(APIError)
    expect((error as APIError).status).toBe(307)
    expect(service.requests.map((request) => request.target)).toEqual(['/rest/v1/agents?page=1'])
  })
})

describe('a dispatcher that follows redirects whatever the request says', () => {
  // Built on undici's RedirectHandler directly (as RedirectHandler.buildDispatch does): it ignores
  // the per-request maxRedirections. The SDK notices the second hop starting and refuses it
  // before a byte of it is written.
  const stubborn = (): Dispatcher =>
    new Agent().compose((dispatch) => (options, handler) => dispatch(options, new RedirectHandler(dispatch, 5, options, handler)))

  it.each(calls)('%s: the next hop is refused before it is sent; not retried', async (_call, call, method) => {
    service.respond(() => response(307, { location: `${elsewhere.origin}/rest/v1/steal` }, ''))
    const error = await rejection(call(clientWith(stubborn())))

    expect(elsewhere.requests).toEqual([])
    expect(error).toBeInstanceOf(APIConnectionError)
    const connectionError = error as APIConnectionError
    expect(connectionError.retryable).toBe(false)
    expect(connectionError.message).toContain('redirect not followed')
    expect(connectionError.message).toContain(`${method} /rest/v1/`)
    expect(inspect(connectionError, { depth: Infinity })).not.toContain(KEY_SECRET)
    expect(service.requests).toHaveLength(1)
  })
})

describe('a dispatcher that retries by itself', () => {
  it('its transparent retry (same request, same origin) is not taken for a redirect', async () => {
    let first = true
    service.respond(() => {
      if (!first) return json(200, agentsPage())
      first = false
      return DESTROY
    })
    const dispatcher = new Agent().compose(interceptors.retry({ maxRetries: 1, minTimeout: 10, timeoutFactor: 1 }))
    dispatchers.push(dispatcher)
    const client = new ChatServiceClient({ baseUrl: service.origin, keyId: KEY_ID, keySecret: KEY_SECRET, dispatcher, maxRetries: 0 })
    clients.push(client)

    const page = await client.agents.list()

    expect(page.data).toHaveLength(1)
    expect(service.requests).toHaveLength(2)
  })
})
