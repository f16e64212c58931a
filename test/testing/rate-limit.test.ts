// The fake's rate limit (issue 21): a token bucket per key pair, 429 with Retry-After when empty.
// At the wire with a controlled wall clock (only Date is faked, so the server runs on real
// timers), then user's-eye: jobs that finish under the limit through the SDK's retries and its
// client-wide 429 pause.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ChatServiceClient } from 'chat-service-sdk'
import {
  createFakeChatService,
  generateDataset,
  type FakeChatService,
  type FakeServerHandle,
  type RateLimitOptions,
} from 'chat-service-sdk/testing'
import { createFakeHandlers, createMswNetwork, type MswNetwork } from 'chat-service-sdk/testing/msw'
import { onFakeClock } from '../helpers/pacing.ts'
import { call, fixtureSeed, KEY_A, KEY_B, type ErrorBody } from './helpers.ts'

const servers: FakeServerHandle[] = []
let network: MswNetwork | undefined
afterEach(async () => {
  vi.useRealTimers()
  network?.disable()
  network = undefined
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

async function limited(rateLimit: RateLimitOptions): Promise<{ fake: FakeChatService; url: string }> {
  const fake = createFakeChatService({ seed: fixtureSeed(), rateLimit })
  const server = await fake.listen()
  servers.push(server)
  return { fake, url: server.url }
}

const agents = (url: string, key: object = KEY_A, query = '') => call<ErrorBody>(url, 'GET', `/rest/v1/agents${query}`, { body: key })
const statuses = async (n: number, send: () => Promise<{ status: number }>): Promise<number[]> => {
  const out: number[] = []
  for (let i = 0; i < n; i++) out.push((await send()).status)
  return out
}

describe('rateLimit at the wire', () => {
  it('lets a burst through, then answers 429 with Retry-After in whole seconds and the fake’s error body', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.UTC(2030, 0, 1) })
    const { fake, url } = await limited({ requestsPerSecond: 1, burst: 3 })
    expect(await statuses(3, () => agents(url))).toEqual([200, 200, 200])
    const refused = await agents(url)
    expect(refused.status).toBe(429)
    expect(refused.headers['retry-after']).toBe('1')
    expect(refused.headers['x-request-id']).toMatch(/^req_/)
    expect(refused.json).toEqual({ error: { status: 429, message: 'Rate limit exceeded for API key key_a: retry after 1 s' } })
    expect(fake.requests.map((r) => r.status)).toEqual([200, 200, 200, 429])
  })

  it('refills at requestsPerSecond up to burst; a refused request costs nothing', async () => {
    const start = Date.UTC(2030, 0, 1)
    vi.useFakeTimers({ toFake: ['Date'], now: start })
    const { url } = await limited({ requestsPerSecond: 2, burst: 4 })
    expect(await statuses(4, () => agents(url))).toEqual([200, 200, 200, 200])
    // Hammering while refused does not push the wait further out: still one token away.
    expect(await statuses(5, () => agents(url))).toEqual([429, 429, 429, 429, 429])
    vi.setSystemTime(start + 499)
    expect((await agents(url)).status).toBe(429)
    vi.setSystemTime(start + 500) // 0.5 s at 2/s: one token
    expect(await statuses(2, () => agents(url))).toEqual([200, 429])
    vi.setSystemTime(start + 60_000) // a quiet minute refills to burst, not beyond
    expect(await statuses(5, () => agents(url))).toEqual([200, 200, 200, 200, 429])
  })

  it('rounds Retry-After up to the second a token is back', async () => {
    const start = Date.UTC(2030, 0, 1)
    vi.useFakeTimers({ toFake: ['Date'], now: start })
    const { url } = await limited({ requestsPerSecond: 0.4, burst: 1 }) // a token every 2.5 s
    expect((await agents(url)).status).toBe(200)
    expect((await agents(url)).headers['retry-after']).toBe('3')
    vi.setSystemTime(start + 2_000) // 0.8 of a token: 0.5 s to go
    expect((await agents(url)).headers['retry-after']).toBe('1')
  })

  it('keeps one bucket per key pair, and burst defaults to requestsPerSecond rounded up', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.UTC(2030, 0, 1) })
    const { url } = await limited({ requestsPerSecond: 1.5 })
    expect(await statuses(3, () => agents(url, KEY_A))).toEqual([200, 200, 429])
    expect(await statuses(3, () => agents(url, KEY_B))).toEqual([200, 200, 429])
  })

  it('counts every request with valid credentials (a 400 or 404 of the endpoint too), and no other', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.UTC(2030, 0, 1) })
    const { fake, url } = await limited({ requestsPerSecond: 1, burst: 2 })
    const notCounted = [
      await agents(url, { keyId: 'key_a', keySecret: 'wrong' }), // 401: no key pair to charge
      await agents(url, { keyId: 'key_unknown', keySecret: 'x' }), // 401
      await call(url, 'GET', '/rest/v1/agents', { rawBody: '{' }), // 400 before the credentials
      await call(url, 'GET', '/rest/v1/nope', { body: KEY_A }), // 404 route
      await call(url, 'DELETE', '/rest/v1/agents', { body: KEY_A }), // 405
    ]
    expect(notCounted.map((r) => r.status)).toEqual([401, 401, 400, 404, 405])
    fake.failNext(2, { status: 503 }) // answered by a fault: never reached the service
    expect(await statuses(2, () => agents(url))).toEqual([503, 503])
    const counted = [
      await agents(url, KEY_A, '?limit=101'),
      await call(url, 'GET', '/rest/v1/conversations/nope/messages', { body: KEY_A }),
    ]
    expect(counted.map((r) => r.status)).toEqual([400, 404])
    expect((await agents(url)).status).toBe(429)
  })

  it('reset() fills every bucket again', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.UTC(2030, 0, 1) })
    const { fake, url } = await limited({ requestsPerSecond: 1, burst: 1 })
    expect(await statuses(2, () => agents(url))).toEqual([200, 429])
    fake.reset()
    expect((await agents(url)).status).toBe(200)
  })

  it('applies in msw mode too, to GETs (by the key of the body’s length) and POSTs', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.UTC(2030, 0, 1) })
    const fake = createFakeChatService({ seed: fixtureSeed(), rateLimit: { requestsPerSecond: 1, burst: 2 } })
    network = createMswNetwork(createFakeHandlers(fake, 'http://chat.test', { companyForGet: 'co_a' }))
    network.enable()
    const token = () => call('http://chat.test', 'POST', '/rest/v1/auth/token', { body: { ...KEY_A, userId: 'ext_1' } })
    expect([(await agents('http://chat.test')).status, (await token()).status]).toEqual([200, 200])
    const refused = await token()
    expect(refused.status).toBe(429)
    expect(refused.headers['retry-after']).toBe('1')
    expect((await agents('http://chat.test')).status).toBe(429)
  })

  it('a fixed window: requestsPerSecond × windowMs / 1000 requests per window aligned to the clock; Retry-After until its end', async () => {
    const start = Date.UTC(2030, 0, 1) // a whole multiple of the window
    vi.useFakeTimers({ toFake: ['Date'], now: start + 7_500 })
    const { url } = await limited({ algorithm: 'fixed-window', requestsPerSecond: 0.3, windowMs: 10_000 }) // 3 per 10 s
    expect(await statuses(3, () => agents(url))).toEqual([200, 200, 200])
    const refused = await agents(url)
    expect(refused.status).toBe(429)
    expect(refused.headers['retry-after']).toBe('3') // 2.5 s left of the window, rounded up
    vi.setSystemTime(start + 9_999)
    expect((await agents(url)).status).toBe(429) // a refusal takes nothing, and the window has not moved
    vi.setSystemTime(start + 10_000) // a new window: 3 again, not 3 plus what was left
    expect(await statuses(4, () => agents(url))).toEqual([200, 200, 200, 429])
  })

  it("retryAfter: 'none' sends a 429 without any wait header; 'milliseconds' sends retry-after-ms (the exact wait)", async () => {
    const start = Date.UTC(2030, 0, 1)
    vi.useFakeTimers({ toFake: ['Date'], now: start })
    const none = await limited({ requestsPerSecond: 2, burst: 1, retryAfter: 'none' })
    expect((await agents(none.url)).status).toBe(200)
    const bare = await agents(none.url)
    expect(bare.status).toBe(429)
    expect(bare.headers['retry-after']).toBeUndefined()
    expect(bare.headers['retry-after-ms']).toBeUndefined()
    expect(bare.json).toEqual({ error: { status: 429, message: 'Rate limit exceeded for API key key_a' } })
    const ms = await limited({ algorithm: 'fixed-window', requestsPerSecond: 1, windowMs: 1_000, retryAfter: 'milliseconds' })
    vi.setSystemTime(start + 250)
    expect((await agents(ms.url)).status).toBe(200)
    const exact = await agents(ms.url)
    expect(exact.headers['retry-after-ms']).toBe('750')
    expect(exact.headers['retry-after']).toBeUndefined()
  })

  it("endpoints: an endpoint's own limit is taken first (per key pair), then the key pair's; its 429 names the endpoint", async () => {
    const start = Date.UTC(2030, 0, 1)
    vi.useFakeTimers({ toFake: ['Date'], now: start })
    const { fake, url } = await limited({
      requestsPerSecond: 100,
      burst: 4,
      endpoints: { 'POST /rest/v1/auth/token': { requestsPerSecond: 1, burst: 1 } },
    })
    const token = (key: object = KEY_A) => call<ErrorBody>(url, 'POST', '/rest/v1/auth/token', { body: { ...key, userId: 'ext_1' } })
    expect((await token()).status).toBe(200)
    const refused = await token()
    expect(refused.status).toBe(429)
    expect(refused.headers['retry-after']).toBe('1')
    expect(refused.json).toEqual({
      error: { status: 429, message: 'Rate limit exceeded for API key key_a on POST /rest/v1/auth/token: retry after 1 s' },
    })
    // The other endpoints flow: the token request refused by its own limit took nothing of the key pair's 4.
    expect(await statuses(3, () => agents(url))).toEqual([200, 200, 200])
    expect((await token(KEY_B)).status).toBe(200) // another key pair has its own
    expect((await agents(url)).status).toBe(429) // the key pair's bucket: 4 taken (1 token, 3 lists)
    expect((await agents(url)).json.error.message).toBe('Rate limit exceeded for API key key_a: retry after 1 s')
    vi.setSystemTime(start + 1_000)
    expect((await token()).status).toBe(200)
    fake.reset()
    expect(await statuses(2, () => token())).toEqual([200, 429])
  })

  it('refuses options out of range with a RangeError', () => {
    expect(() =>
      createFakeChatService({
        rateLimit: {
          requestsPerSecond: 5,
          endpoints: { 'POST /rest/v1/auth/tokens': { requestsPerSecond: 1 } },
        },
      }),
    ).toThrow(
      'rateLimit.endpoints names "POST /rest/v1/auth/tokens", no endpoint of the spec: one of POST /rest/v1/auth/token, GET /rest/v1/customer-users,',
    )
    expect(() =>
      createFakeChatService({ rateLimit: { requestsPerSecond: 5, endpoints: { 'GET /rest/v1/agents': { requestsPerSecond: 0 } } } }),
    ).toThrow('rateLimit.endpoints["GET /rest/v1/agents"].requestsPerSecond must be a finite number > 0')
    expect(() => createFakeChatService({ rateLimit: { algorithm: 'fixed-window', requestsPerSecond: 5, windowMs: 0 } })).toThrow(
      'rateLimit.windowMs must be an integer from 1 to 3,600,000',
    )
    expect(() => createFakeChatService({ rateLimit: { algorithm: 'sliding' as 'fixed-window', requestsPerSecond: 5 } })).toThrow(
      "rateLimit.algorithm must be 'token-bucket' or 'fixed-window'",
    )
    expect(() => createFakeChatService({ rateLimit: { requestsPerSecond: 5, retryAfter: 'sometimes' as 'none' } })).toThrow(RangeError)
    expect(() => createFakeChatService({ rateLimit: { requestsPerSecond: 0 } })).toThrow(RangeError)
    expect(() => createFakeChatService({ rateLimit: { requestsPerSecond: Number.NaN } })).toThrow(
      'rateLimit.requestsPerSecond must be a finite number > 0',
    )
    expect(() => createFakeChatService({ rateLimit: { requestsPerSecond: 5, burst: 0 } })).toThrow(
      'rateLimit.burst must be an integer >= 1',
    )
    expect(() => createFakeChatService({ rateLimit: { requestsPerSecond: 5, burst: 1.5 } })).toThrow(RangeError)
  })
})

/** Requests of the log by status; and how often each request (method, target, body) was refused. */
function tally(fake: FakeChatService): { ok: number; refused: number; mostRefusalsOfOneRequest: number } {
  const refusals = new Map<string, number>()
  for (const r of fake.requests) {
    if (r.status !== 429) continue
    const key = `${r.method} ${r.rawPath} ${r.rawBody ?? ''}`
    refusals.set(key, (refusals.get(key) ?? 0) + 1)
  }
  return {
    ok: fake.requests.filter((r) => r.status === 200).length,
    refused: fake.requests.filter((r) => r.status === 429).length,
    mostRefusalsOfOneRequest: Math.max(0, ...refusals.values()),
  }
}

describe('jobs under rateLimit, through the SDK', () => {
  // 10 requests a second, bursts of 9: the Retry-After of 1 s (its minimum) refills a whole
  // bucket (with room for a timer that fires a little early), more than the 8 requests listAll
  // keeps in flight, so after the client-wide pause every waiting request gets through.
  const rateLimit = { requestsPerSecond: 10, burst: 9 }

  /** Another job of the same key pair has just used the whole burst: the next request waits. */
  async function drain(server: FakeServerHandle): Promise<void> {
    const { keyId, keySecret } = server.clientOptions()
    const sent = await Promise.all(Array.from({ length: 9 }, () => agents(server.url, { keyId, keySecret })))
    expect(sent.map((r) => r.status)).toEqual(Array.from({ length: 9 }, () => 200))
  }

  it('a nightly sync (list every user, update each) completes; each request is refused at most once', async () => {
    // Uncompressed under onFakeClock: zlib's thread pool would move its fake clock with the machine's load (test/helpers/pacing.ts).
    const fake = createFakeChatService({
      seed: generateDataset({ seed: 4, customerUsers: 20, conversations: 0, messages: 0 }),
      rateLimit,
      compression: false,
    })
    const server = await fake.listen()
    servers.push(server)
    await drain(server)
    fake.clearRequests()
    const client = new ChatServiceClient({ ...server.clientOptions(), logLevel: 'off' })
    try {
      // On a fake clock, the limiter's too (test/helpers/pacing.ts): the 1 s pauses and the paced
      // rate's climb from its least take seconds of it, not of the suite.
      await onFakeClock(async () => {
        for await (const user of client.customerUsers.list({ limit: 10 })) {
          await client.customerUsers.update(user.id, { metadata: { ...user.metadata, synced: true } })
        }
      })
    } finally {
      await client.close()
    }
    expect(fake.listCustomerUsers('comp_1').every((u) => u.metadata['synced'] === true)).toBe(true)
    const { ok, refused, mostRefusalsOfOneRequest } = tally(fake)
    expect(ok).toBe(22) // 2 pages and 20 updates, each done exactly once
    expect(refused).toBeGreaterThanOrEqual(1) // the limit was hit: the bucket was empty
    expect(refused).toBeLessThanOrEqual(3) // each refusal is followed by a pause that refills 9 tokens: 22 requests, at most 3

    expect(mostRefusalsOfOneRequest).toBe(1)
  })

  // What keeps the requests apart here is pacing (the default) from the first 429 on: with the
  // client-wide pause skipped this still passes (all 8 requests were in flight when the bucket ran
  // dry, and each waits out its own 429), so the pause itself is shown by resilience/rate-limit.
  it('listAll with 8 requests in flight completes: each request is refused at most once, no 429 storm', async () => {
    const fake = createFakeChatService({
      seed: generateDataset({ seed: 6, conversations: 20, messages: 400 }),
      rateLimit,
      compression: false,
    })
    const server = await fake.listen()
    servers.push(server)
    await drain(server)
    fake.clearRequests()
    const client = new ChatServiceClient({ ...server.clientOptions(), logLevel: 'off' })
    const seen: string[] = []
    try {
      await onFakeClock(async () => {
        for await (const message of client.conversations.messages.listAll({ limit: 100, concurrency: 8 })) seen.push(message.id)
      })
    } finally {
      await client.close()
    }
    const expected = fake.listConversations('comp_1').flatMap((c) => fake.listMessages('comp_1', c.id).map((m) => m.id))
    expect(seen).toEqual(expected)
    const { ok, refused, mostRefusalsOfOneRequest } = tally(fake)
    expect(ok).toBe(21) // the conversation page and one page per conversation
    expect(refused).toBeGreaterThanOrEqual(1)
    // At most the requests in flight when the bucket ran dry, per pause: never a storm of retries.
    expect(mostRefusalsOfOneRequest).toBe(1)
  })
})
