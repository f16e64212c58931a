// Fixed in 0.2 (found by the second test suite): a 429 whose call does not retry (maxRetries: 0, or retries used up) pauses the client for a
// random backoffDelay(attempt - 1) (0-500 ms for the first attempt) instead of the service's
// Retry-After, because Transport.send only takes decision.delayMs when decision.retry is true.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ChatServiceClient, RateLimitError } from 'chat-service-sdk'
import { rejection, startLoopback, until, type LoopbackServer } from '../helpers/loopback.ts'
import { acceptSome } from '../helpers/pacing.ts'

let server: LoopbackServer
beforeAll(async () => {
  server = await startLoopback()
})
afterAll(() => server.close())

it('after a 429 with retry-after: 1 on a call with maxRetries: 0, the next call of the client waits the second out', async () => {
  server.respond((request) =>
    request.headers['x-call'] === 'limited'
      ? { status: 429, headers: { 'retry-after': '1' }, body: { error: 'slow down' } }
      : { body: { data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } } },
  )
  const client = new ChatServiceClient({ baseUrl: server.origin, keyId: 'k', keySecret: 'ks_live_Q9vX3mR7pL2wT8nB5cY1', logLevel: 'off' })
  try {
    // Calls accepted first: a client whose first call met the 429 would pace the next one 2 s out
    // (the least rate), hiding the pause this is about (test/helpers/pacing.ts).
    await acceptSome(client)
    server.clear()
    const error = await rejection(client.agents.list({}, { headers: { 'x-call': 'limited' }, maxRetries: 0 }))
    expect(error).toBeInstanceOf(RateLimitError)
    const sentAt = server.arrivals[0]!.sentAt!
    await client.agents.list({}, { headers: { 'x-call': 'next' } })
    await until(() => server.arrivals.length === 2)
    expect(server.arrivals[1]!.at - sentAt).toBeGreaterThanOrEqual(900)
  } finally {
    await client.close()
  }
})
