// msw mode at the wire: raw undici requests (which, unlike fetch, can send a GET body) through the
// kit's msw network. The fixture's companies co_a and co_b have keys of the same length, so a GET
// body's length cannot tell them apart: most tests name the company with companyForGet.
import { Readable } from 'node:stream'
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
import { createFakeHandlers, createMswNetwork, type FakeHandlersOptions, type MswNetwork } from '../../src/testing/msw.ts'
import { call, fixtureSeed, KEY_A, KEY_B, KEY_EMPTY, type ErrorBody, type ListBody, type MessagesBody, type TokenBody } from './helpers.ts'

const BASE = 'http://chat.test'
let fake: FakeChatService
let network: MswNetwork | undefined

function enable(options: FakeHandlersOptions = { companyForGet: 'co_a' }, base = BASE): MswNetwork {
  network = createMswNetwork(createFakeHandlers(fake, base, options))
  network.enable()
  return network
}

beforeEach(() => {
  fake = createFakeChatService({ seed: fixtureSeed() })
})
afterEach(() => {
  network?.disable()
  network = undefined
})

describe('msw mode', () => {
  it('answers undici requests through the handlers; POST bodies are visible and checked', async () => {
    enable()
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
    enable()
    const res = await call(BASE, 'PUT', '/rest/v1/customer-users/u%2Fslash', { body: { ...KEY_A, metadata: { v: 2 } } })
    expect(res.status).toBe(200)
    expect(res.json).toMatchObject({ id: 'u/slash', metadata: { v: 2 } })
    expect(fake.getCustomerUser('co_a', 'u/slash')?.metadata).toEqual({ v: 2 })
    expect((await call(BASE, 'PUT', '/rest/v1/customer-users/u_1', { body: { ...KEY_B, name: 'x' } })).status).toBe(404)
  })

  it('serves a GET whose body is credentials alone as companyForGet, and records the body as invisible', async () => {
    enable()
    const res = await call<ListBody<AgentRecord>>(BASE, 'GET', '/rest/v1/agents?limit=2', { body: KEY_A })
    expect(res.status).toBe(200)
    expect(res.json.data.map((a) => a.id)).toEqual(['agt_1', 'agt_0'])
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

  it('without companyForGet, serves a GET as the one company with a key of that body length', async () => {
    enable({})
    const res = await call<ListBody<AgentRecord>>(BASE, 'GET', '/rest/v1/agents', { body: KEY_EMPTY })
    expect(res.status).toBe(200)
    expect(res.json.pagination.total).toBe(0) // co_empty's agents, not co_a's
  })

  it('refuses (501) a GET whose body length fits keys of several companies, naming companyForGet', async () => {
    enable({})
    const res = await call<ErrorBody>(BASE, 'GET', '/rest/v1/agents', { body: KEY_A })
    expect(res.status).toBe(501)
    expect(res.json.error).toMatchObject({ status: 501 })
    expect(res.json.error.message).toMatch(/co_a, co_b.*companyForGet/)
  })

  it('names at most five companies, and keeps the header ASCII whatever the company ids', async () => {
    const ids = ['société', 'c2', 'c3', 'c4', 'c5', 'c6']
    fake = createFakeChatService({
      seed: { companies: ids.map((id, i) => ({ id, keys: [{ keyId: `key_${i}`, keySecret: 'same-length' }] })) },
    })
    enable({})
    const res = await call<ErrorBody>(BASE, 'GET', '/rest/v1/agents', { body: { keyId: 'key_0', keySecret: 'same-length' } })
    expect(res.status).toBe(501)
    expect(res.json.error.message).toContain('(société, c2, c3, c4, c5, ...)')
    expect(res.headers[WARNING_HEADER]).toContain('(soci?t?, c2, c3, c4, c5, ...)')
  })

  it('refuses (501) customer-user filters it cannot see, instead of answering with the unfiltered list', async () => {
    enable()
    const res = await call<ErrorBody>(BASE, 'GET', '/rest/v1/customer-users', { body: { ...KEY_A, external_id: 'ext_1' } })
    expect(res.status).toBe(501)
    expect(res.json.error.status).toBe(501)
    expect(res.json.error.message).toContain('filters (name, email, external_id)')
    expect(res.json.error.message).toContain('listen mode')
    expect(res.headers[WARNING_HEADER]).toBe(res.json.error.message)
    // The same list without a filter is served, and is the company's whole list.
    const all = await call<ListBody<CustomerUserRecord>>(BASE, 'GET', '/rest/v1/customer-users', { body: KEY_A })
    expect(all.json.data.map((u) => u.id)).toEqual(fake.listCustomerUsers('co_a').map((u) => u.id))
  })

  it('refuses (501) credentials of a length no key of the company has, rather than serving them as the company', async () => {
    enable()
    const res = await call<ErrorBody>(BASE, 'GET', '/rest/v1/agents', { body: { keyId: 'key_a', keySecret: 'a much longer wrong secret' } })
    expect(res.status).toBe(501)
    expect(res.json.error.message).toMatch(/not a credentials-only body of a key of company co_a .*\(40 bytes\)/)
    // Pretty-printed credentials are not what the fake can count on either.
    expect((await call(BASE, 'GET', '/rest/v1/agents', { rawBody: JSON.stringify(KEY_A, null, 2) })).status).toBe(501)
  })

  it('refuses (501) a GET body of unknown length (chunked), and a companyForGet that is no company', async () => {
    enable()
    const chunked = await request(`${BASE}/rest/v1/agents`, {
      method: 'GET',
      headers: { 'content-type': 'application/json' },
      body: Readable.from([JSON.stringify(KEY_A)]),
    })
    expect(chunked.statusCode).toBe(501)
    expect(((await chunked.body.json()) as ErrorBody).error.message).toContain('no content-length')
    network?.disable()
    enable({ companyForGet: 'co_nope' })
    const res = await call<ErrorBody>(BASE, 'GET', '/rest/v1/agents', { body: KEY_A })
    expect(res.status).toBe(501)
    expect(res.json.error.message).toContain('companyForGet co_nope is not a company of this fake (co_a, co_b, co_empty)')
  })

  it('answers 401 to a GET without a JSON body (no content-length or content-type)', async () => {
    enable()
    expect((await call(BASE, 'GET', '/rest/v1/agents')).status).toBe(401)
    expect((await call(BASE, 'GET', '/rest/v1/agents', { body: KEY_A, contentType: 'text/plain' })).status).toBe(401)
  })

  it('serves the data changes of appendMessages, deleteMessage and deleteConversation', async () => {
    enable()
    const appended = fake.appendMessages('co_a', 'conv_1', 2)
    fake.deleteMessage('co_a', 'conv_1', 'm_a')
    fake.deleteConversation('co_a', 'conv_declared')
    const messages = await call<MessagesBody<MessageRecord>>(BASE, 'GET', '/rest/v1/conversations/conv_1/messages', { body: KEY_A })
    expect(messages.json.data.map((m) => m.id)).toEqual(['m_first', 'm_b', 'm_c', ...appended.map((m) => m.id)])
    const conversations = await call<ListBody<{ id: string; message_count: number }>>(BASE, 'GET', '/rest/v1/conversations', {
      body: KEY_A,
    })
    expect(conversations.json.data.map((c) => [c.id, c.message_count])).toEqual([
      ['conv_1', 5],
      ['conv/2 ü', 1],
    ])
  })

  it('serves GETs as companyForGet', async () => {
    enable({ companyForGet: 'co_b' })
    const res = await call<MessagesBody<MessageRecord>>(BASE, 'GET', '/rest/v1/conversations/conv_b/messages', { body: KEY_B })
    expect(res.status).toBe(200)
    expect(res.json.conversation).toEqual({ id: 'conv_b', title: 'B conv' })
    expect((await call(BASE, 'GET', '/rest/v1/conversations/conv_1/messages', { body: KEY_B })).status).toBe(404)
  })

  it('accepts a base URL ending in /rest/v1 and keeps the routing rules (doubled prefix 404, 405)', async () => {
    enable(undefined, `${BASE}/rest/v1/`)
    expect((await call(BASE, 'GET', '/rest/v1/agents', { body: KEY_A })).status).toBe(200)
    expect((await call(BASE, 'GET', '/rest/v1/v1/agents', { body: KEY_A })).status).toBe(404)
    expect((await call(BASE, 'DELETE', '/rest/v1/agents', { body: KEY_A })).status).toBe(405)
  })

  it('fails unhandled requests (other hosts) with a network error', async () => {
    enable()
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
    enable()
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
    const net = enable()
    expect((await call(BASE, 'GET', '/rest/v1/agents', { body: KEY_A })).status).toBe(200)
    net.disable()
    network = undefined
    // chat.test does not resolve: without msw the request fails on DNS, and the fake sees nothing new
    await expect(call(BASE, 'GET', '/rest/v1/agents', { body: KEY_A })).rejects.toThrow()
    expect(fake.requests).toHaveLength(1)
  })
})
