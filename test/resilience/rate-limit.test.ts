/**
 * The shared 429 back-off (issue 10), measured at a loopback server: once one request of a client
 * gets 429 with `retry-after: 1`, every NEW attempt of that client (and of clients derived from
 * it with withOptions) started after the 429 arrived waits until that second has passed; requests
 * already in flight go on and are not cancelled. Only lower bounds on arrival times are asserted.
 */
import { beforeEach, describe, expect, it } from 'vitest'
import { ChatServiceClient, RateLimitError } from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, agent } from '../helpers/fixtures.ts'
import { rejection, until, type Arrival, type LoopbackServer, useLoopback } from '../helpers/loopback.ts'
import { acceptSome } from '../helpers/pacing.ts'

/** Lower bound on the wait after a `retry-after: 1`, leaving 100 ms for clocks and scheduling. */
const AT_LEAST_MS = 900

let server: LoopbackServer
/** How many times each call (by its `x-call` header) has arrived. */
let seen: Map<string, number>

useLoopback((started) => {
  server = started
})
beforeEach(() => {
  seen = new Map()
  server.respond((request) => {
    const call = callOf(request)
    const count = (seen.get(call) ?? 0) + 1
    seen.set(call, count)
    const page = { data: [agent(1)], pagination: { page: 1, limit: 20, total: 1, total_pages: 1 } }
    if (call.startsWith('limited') && count === 1) return { status: 429, headers: { 'retry-after': '1' }, body: { error: 'slow down' } }
    if (call === 'in-flight') return { body: page, delayMs: 400 }
    return { body: page }
  })
})

function callOf(request: Pick<Arrival, 'headers'>): string {
  const value = request.headers['x-call']
  return typeof value === 'string' ? value : ''
}

function arrivalsOf(call: string): Arrival[] {
  return server.arrivals.filter((arrival) => callOf(arrival) === call)
}

/**
 * A client that has had calls accepted before the 429 (untagged): its first 429 then paces it at
 * some 16 requests a second, not at the least rate, whose 2 s between requests would keep the
 * calls below past the second even with the pause broken (test/helpers/pacing.ts).
 */
async function makeClient(): Promise<ChatServiceClient> {
  const client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, logLevel: 'off' })
  await acceptSome(client)
  return client
}

/** Starts `client.agents.list()` tagged `call`. */
function list(client: ChatServiceClient, call: string): Promise<unknown> {
  return Promise.resolve(client.agents.list({}, { headers: { 'x-call': call } }))
}

/** When the 429 of call `call` was handed to the client's socket (server clock = test clock). */
async function tooManyRequestsSent(call: string): Promise<number> {
  await until(() => arrivalsOf(call)[0]?.sentAt !== undefined)
  return arrivalsOf(call)[0]?.sentAt ?? Number.NaN
}

describe('after a 429 with retry-after: 1', () => {
  it('new attempts of the client and of its derived clients wait the second out; a request in flight goes on', async () => {
    const client = await makeClient()
    try {
      const inFlight = list(client, 'in-flight')
      await until(() => arrivalsOf('in-flight').length === 1)
      const limited = list(client, 'limited')
      const sentAt = await tooManyRequestsSent('limited')
      await until(() => client.rateLimitedUntil !== undefined) // the 429 has reached the client (not: 50 ms have passed)
      const later = list(client, 'later')
      const fromDerived = list(client.withOptions({ timeout: 30_000 }), 'derived')
      await Promise.all([inFlight, limited, later, fromDerived])

      expect(arrivalsOf('in-flight')).toHaveLength(1) // not cancelled, not re-sent
      expect(arrivalsOf('in-flight')[0]!.at).toBeLessThan(sentAt)
      expect(arrivalsOf('limited')).toHaveLength(2)
      expect(arrivalsOf('limited')[1]!.at - sentAt).toBeGreaterThanOrEqual(AT_LEAST_MS)
      expect(arrivalsOf('later')).toHaveLength(1)
      expect(arrivalsOf('later')[0]!.at - sentAt).toBeGreaterThanOrEqual(AT_LEAST_MS)
      expect(arrivalsOf('derived')[0]!.at - sentAt).toBeGreaterThanOrEqual(AT_LEAST_MS)
    } finally {
      await client.close()
    }
  })

  it('a 429 on a derived client pauses its parent too', async () => {
    const client = await makeClient()
    try {
      const limited = list(client.withOptions({ maxRetries: 3 }), 'limited-derived')
      const sentAt = await tooManyRequestsSent('limited-derived')
      await until(() => client.rateLimitedUntil !== undefined) // the derived client's 429 has reached it, and paused the parent
      await list(client, 'parent')
      await limited
      expect(arrivalsOf('parent')[0]!.at - sentAt).toBeGreaterThanOrEqual(AT_LEAST_MS)
    } finally {
      await client.close()
    }
  })

  it("pacing: 'off' (0.3): the call that got the 429 waits the second out before its retry, and throws RateLimitError once retries run out", async () => {
    server.respond((request) =>
      callOf(request) === 'always-limited'
        ? { status: 429, headers: { 'retry-after': '1' }, body: { error: 'slow down' } }
        : { body: { data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } } },
    )
    const client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, logLevel: 'off', pacing: 'off' })
    try {
      const error = await rejection(client.agents.list({}, { headers: { 'x-call': 'always-limited' }, maxRetries: 1 }))
      expect(error).toBeInstanceOf(RateLimitError)
      const limited = arrivalsOf('always-limited')
      expect(limited).toHaveLength(2)
      expect(limited[1]!.at - limited[0]!.sentAt!).toBeGreaterThanOrEqual(AT_LEAST_MS) // the retry waited
    } finally {
      await client.close()
    }
  })
})
