// Fixed in 0.2 (found by a cold review of the core): each test failed before its fix.
import { tracingChannel } from 'node:diagnostics_channel'
import { inspect } from 'node:util'
import { Agent, type Dispatcher } from 'undici'
import { afterAll, beforeAll, expect, it } from 'vitest'
import * as z from 'zod'
import {
  ChatServiceClient,
  ChatServiceError,
  RequestValidationError,
  ResponseValidationError,
  TRACING_CHANNEL,
  type RequestTrace,
} from 'chat-service-sdk'
import { rejection, startLoopback, type LoopbackServer } from '../helpers/loopback.ts'

const SECRET = 'sk_test_cold_review_0123456789'
const emptyPage = { data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } }
let server: LoopbackServer

beforeAll(async () => {
  server = await startLoopback()
})
afterAll(() => server.close())

function client(options: ConstructorParameters<typeof ChatServiceClient>[0] = {}): ChatServiceClient {
  return new ChatServiceClient({ baseUrl: server.origin, keyId: 'k', keySecret: SECRET, logLevel: 'off', ...options })
}

it('a 429 asking for longer than 60 s on a call with no retries left does not pause the client for that long', async () => {
  server.clear()
  let first = true
  server.respond(() => {
    if (!first) return { body: emptyPage }
    first = false
    return { status: 429, headers: { 'retry-after': '3600' }, body: {} }
  })
  const c = client({ maxRetries: 0 })
  try {
    await rejection(c.agents.list())
    // Before: the whole client (derived clients too) waited the full hour for the next attempt.
    const page = await c.withOptions({}).agents.list({}, { signal: AbortSignal.timeout(3_000) })
    expect(page.data).toEqual([])
  } finally {
    await c.close()
  }
})

it('an attempt abandoned while it waited for a socket does not cost a healthy keep-alive socket', async () => {
  server.clear()
  server.respond(() => ({ body: emptyPage, delayMs: 100 }))
  const dispatcher = new Agent({ connections: 1 })
  const c = client({ dispatcher, maxRetries: 0 })
  try {
    const before = server.connections
    const slow = c.agents.list()
    const queued = c.agents.list({}, { signal: AbortSignal.timeout(30) }) // gives up while the only socket is busy
    await rejection(queued)
    await slow
    await c.agents.list()
    await c.agents.list()
    // Before: the abandoned attempt, once given the socket, destroyed it, so later calls reconnected.
    expect(server.connections - before).toBe(1)
  } finally {
    await c.close()
    await dispatcher.close()
  }
})

it('a dispatcher that throws instead of reporting an error gives a ChatServiceError with no secret in it', async () => {
  const throwing = {
    dispatch: () => {
      throw new Error(`interceptor refused a body holding ${SECRET}`)
    },
    close: () => Promise.resolve(),
    destroy: () => Promise.resolve(),
  } as unknown as Dispatcher
  const c = client({ dispatcher: throwing, maxRetries: 0 })
  const error = await rejection(c.agents.list())
  expect(error).toBeInstanceOf(ChatServiceError)
  expect(inspect(error, { depth: 10 })).not.toContain(SECRET)
})

it('a ResponseValidationError does not show a secret that is a key of the response (issue paths are scrubbed)', async () => {
  server.respond(() => ({
    body: {
      data: [
        {
          id: 'cu-1',
          external_id: 'x',
          name: null,
          email: null,
          metadata: { keys: { [SECRET]: 'not a number' } },
          active: true,
          created_at: 't',
          last_seen_at: null,
        },
      ],
      pagination: { page: 1, limit: 20, total: 1, total_pages: 1 },
    },
  }))
  const c = client()
  const users = c.customerUsers.withMetadata(z.looseObject({ keys: z.record(z.string(), z.number()) }))
  const error = await rejection(users.list())
  expect(error).toBeInstanceOf(ResponseValidationError)
  expect(inspect(error, { depth: 10 })).not.toContain(SECRET)
  expect(JSON.stringify((error as ResponseValidationError).issues)).not.toContain(SECRET)
  await c.close()
})

it('pages a prefetch no longer needs are traced as cancelled, not as the caller aborting', async () => {
  server.respond((arrival) => {
    const page = Number(new URL(arrival.target, 'http://x').searchParams.get('page'))
    return {
      body: {
        data: [{ id: `a${page}`, name: 'n', active: true, created_at: 't', updated_at: 't' }],
        pagination: { page, limit: 1, total: 9, total_pages: 9 },
      },
      delayMs: page === 1 ? 0 : 50,
    }
  })
  const events: { outcome: RequestTrace['outcome']; error: unknown }[] = []
  const channel = tracingChannel<unknown, RequestTrace>(TRACING_CHANNEL)
  const subscriber = {
    start() {},
    end() {},
    asyncStart() {},
    asyncEnd() {},
    error(trace: RequestTrace) {
      events.push({ outcome: trace.outcome, error: trace.error })
    },
  }
  channel.subscribe(subscriber)
  const c = client()
  try {
    for await (const _ of c.agents.list({ limit: 1 }, { prefetch: 4 })) break
    await new Promise((resolve) => setTimeout(resolve, 200))
  } finally {
    channel.unsubscribe(subscriber)
    await c.close()
  }
  expect(events.length).toBeGreaterThan(0)
  for (const event of events) {
    expect(event.outcome).toBe('cancelled')
    expect((event.error as Error).name).not.toBe('APIUserAbortError')
  }
})

it('an accept header of the caller is refused, not silently replaced', () => {
  expect(() => client({ headers: { Accept: 'text/html' } })).toThrow(RequestValidationError)
})
