import { request } from 'undici'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import {
  createFakeChatService,
  WARNING_HEADER,
  type AgentRecord,
  type CustomerUserRecord,
  type FakeChatService,
  type MessageRecord,
} from '../../src/testing/index.ts'
import { createFakeHandlers, createMswNetwork, type MswNetwork } from '../../src/testing/msw.ts'
import { call, fixtureSeed, KEY_A, KEY_B, type ErrorBody, type ListBody, type MessagesBody, type TokenBody } from './helpers.ts'

const BASE = 'http://chat.test'
let fake: FakeChatService
let network: MswNetwork | undefined

async function enable(handlers = createFakeHandlers(fake, BASE)): Promise<MswNetwork> {
  network = createMswNetwork(handlers)
  network.enable()
  return network
}

beforeEach(() => {
  fake = createFakeChatService({ seed: fixtureSeed() })
})
afterEach(async () => {
  if (network) network.disable()
  network = undefined
})

describe('msw mode', () => {
  it('answers undici requests through the handlers; POST bodies are visible and checked', async () => {
    await enable()
    const res = await call<TokenBody>(BASE, 'POST', '/rest/v1/auth/token', { body: { ...KEY_A, userId: 'ext_1', agentId: 'agt_1' } })
    expect(res.status).toBe(200)
    expect(res.json.user).toEqual({ id: 'u_1', externalId: 'ext_1', companyId: 'co_a', agentId: 'agt_1' })
    expect(fake.verifyToken(res.json.token).valid).toBe(true)
    expect(fake.requests[0]).toMatchObject({
      method: 'POST',
      path: '/rest/v1/auth/token',
      bodyVisible: true,
      body: { ...KEY_A, userId: 'ext_1', agentId: 'agt_1' },
    })
    expect((await call(BASE, 'POST', '/rest/v1/auth/token', { body: { keyId: 'key_a', keySecret: 'bad', userId: 'x' } })).status).toBe(401)
  })

  it('applies PUT updates to the shared state, scoped by the body credentials', async () => {
    await enable()
    const res = await call(BASE, 'PUT', '/rest/v1/customer-users/u%2Fslash', { body: { ...KEY_A, metadata: { v: 2 } } })
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ id: 'u/slash', metadata: { v: 2 } })
    expect(fake.getCustomerUser('co_a', 'u/slash')?.metadata).toEqual({ v: 2 })
    expect((await call(BASE, 'PUT', '/rest/v1/customer-users/u_1', { body: { ...KEY_B, name: 'x' } })).status).toBe(404)
  })

  it('serves GET without seeing the body: recorded as invisible, attributed to the first company', async () => {
    await enable()
    const res = await call<ListBody<AgentRecord>>(BASE, 'GET', '/rest/v1/agents?limit=2', { body: KEY_A })
    expect(res.status).toBe(200)
    expect(res.json.data.map((a: { id: string }) => a.id)).toEqual(['agt_1', 'agt_0'])
    expect(res.json.pagination).toEqual({ page: 1, limit: 2, total: 3, total_pages: 2 })
    const recorded = fake.requests[0]!
    expect(recorded).toMatchObject({
      method: 'GET',
      path: '/rest/v1/agents',
      query: { limit: '2' },
      bodyVisible: false,
      body: undefined,
      rawBody: undefined,
    })
    expect(Number(recorded.headers['content-length'])).toBe(JSON.stringify(KEY_A).length)
  })

  it('answers 401 to a GET without a JSON body (no content-length or content-type)', async () => {
    await enable()
    expect((await call(BASE, 'GET', '/rest/v1/agents')).status).toBe(401)
    expect((await call(BASE, 'GET', '/rest/v1/agents', { body: KEY_A, contentType: 'text/plain' })).status).toBe(401)
  })

  it('returns the unfiltered customer-user list with a warning header when a filter was sent', async () => {
    await enable()
    const res = await call<ListBody<CustomerUserRecord>>(BASE, 'GET', '/rest/v1/customer-users', {
      body: { ...KEY_A, external_id: 'ext_1' },
    })
    expect(res.status).toBe(200)
    expect(res.json.data).toHaveLength(4)
    expect(res.headers[WARNING_HEADER]).toMatch(/filters/)
  })

  it('attributes GETs to companyForGet', async () => {
    await enable(createFakeHandlers(fake, BASE, { companyForGet: 'co_b' }))
    const res = await call<MessagesBody<MessageRecord>>(BASE, 'GET', '/rest/v1/conversations/conv_b/messages', { body: KEY_B })
    expect(res.status).toBe(200)
    expect(res.json.conversation).toEqual({ id: 'conv_b', title: 'B conv' })
    expect((await call(BASE, 'GET', '/rest/v1/conversations/conv_1/messages', { body: KEY_B })).status).toBe(404)
  })

  it('accepts a base URL ending in /rest/v1 and keeps the routing rules (doubled prefix 404, 405)', async () => {
    await enable(createFakeHandlers(fake, `${BASE}/rest/v1/`))
    expect((await call(BASE, 'GET', '/rest/v1/agents', { body: KEY_A })).status).toBe(200)
    expect((await call(BASE, 'GET', '/rest/v1/v1/agents', { body: KEY_A })).status).toBe(404)
    expect((await call(BASE, 'DELETE', '/rest/v1/agents', { body: KEY_A })).status).toBe(405)
  })

  it('fails unhandled requests (other hosts) with a network error', async () => {
    await enable()
    const log = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      await expect(request('http://elsewhere.test/rest/v1/agents')).rejects.toThrow()
      expect(log.mock.calls.flat().join(' ')).toContain('elsewhere.test')
    } finally {
      log.mockRestore()
    }
    expect(fake.requests).toHaveLength(0)
  })

  it('supports status, header, delay and drop faults', async () => {
    await enable()
    fake.failNext(1, { status: 429, headers: { 'retry-after': '2' } })
    const limited = await call<ErrorBody>(BASE, 'POST', '/rest/v1/auth/token', { body: { ...KEY_A, userId: 'x' } })
    expect(limited.status).toBe(429)
    expect(limited.headers['retry-after']).toBe('2')
    expect(limited.json.error.status).toBe(429)

    fake.failNext(1, { delayMs: 150 })
    const t0 = performance.now()
    expect((await call(BASE, 'GET', '/rest/v1/agents', { body: KEY_A })).status).toBe(200)
    expect(performance.now() - t0).toBeGreaterThanOrEqual(100)

    fake.failNext(1, { dropConnection: 'before-headers' })
    await expect(call(BASE, 'GET', '/rest/v1/agents', { body: KEY_A })).rejects.toThrow()

    fake.failNext(1, { dropConnection: 'mid-body' })
    const res = await request(`${BASE}/rest/v1/agents`, {
      method: 'GET',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(KEY_A),
    })
    expect(res.statusCode).toBe(200)
    await expect(res.body.text()).rejects.toThrow()

    fake.failNext(1, { bodyDelayMs: 150 })
    const t1 = performance.now()
    const slow = await request(`${BASE}/rest/v1/agents`, {
      method: 'GET',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(KEY_A),
    })
    const tHeaders = performance.now() - t1
    const body = (await slow.body.json()) as { data: unknown[] }
    expect(body.data).toHaveLength(3)
    expect(performance.now() - t1 - tHeaders).toBeGreaterThanOrEqual(100)
    expect(fake.requests).toHaveLength(5)
  })

  it('stops intercepting after disable()', async () => {
    const net = await enable()
    expect((await call(BASE, 'GET', '/rest/v1/agents', { body: KEY_A })).status).toBe(200)
    net.disable()
    network = undefined
    // chat.test does not resolve: without msw the request fails on DNS, and the fake sees nothing new
    await expect(call(BASE, 'GET', '/rest/v1/agents', { body: KEY_A })).rejects.toThrow()
    expect(fake.requests).toHaveLength(1)
  })
})
