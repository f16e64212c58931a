import { request } from 'undici'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createFakeChatService, type AgentRecord, type FakeChatService, type FakeServerHandle } from '../../src/testing/index.ts'
import { call, fixtureSeed, KEY_A, type ListBody } from './helpers.ts'

let fake: FakeChatService
let server: FakeServerHandle
let url: string

beforeAll(async () => {
  fake = createFakeChatService({ seed: fixtureSeed() })
  server = await fake.listen()
  url = server.url
})
afterAll(async () => {
  await server.close()
})
beforeEach(() => {
  fake.reset()
})

const agents = () => call<ListBody<AgentRecord>>(url, 'GET', '/rest/v1/agents', { body: KEY_A })
const rename = (name: string) => call(url, 'PUT', '/rest/v1/customer-users/u_1', { body: { ...KEY_A, name } })

/** Raw request that resolves at the headers; the body is read separately. */
async function timed(path: string, method = 'GET', body: unknown = KEY_A) {
  const t0 = performance.now()
  const res = await request(url + path, {
    method: method as 'GET',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const tHeaders = performance.now() - t0
  return { res, tHeaders, t0 }
}

describe('failNext', () => {
  it('replaces normal handling with a status; the error body is the fake’s; later requests are normal', async () => {
    fake.failNext(1, { status: 503 })
    const failed = await agents()
    expect(failed.status).toBe(503)
    expect(failed.json).toEqual({ error: { status: 503, message: expect.any(String) as unknown } })
    expect((await agents()).status).toBe(200)
    expect(fake.requests).toHaveLength(2)
  })

  it('does not process the request when it answers with a synthetic response', async () => {
    fake.failNext(1, { status: 500 })
    expect((await rename('Nope')).status).toBe(500)
    expect(fake.getCustomerUser('co_a', 'u_1')?.name).toBe('Alice Smith')
  })

  it('sends 429 with Retry-After', async () => {
    fake.failNext(1, { status: 429, headers: { 'retry-after': '1' } })
    const res = await agents()
    expect(res.status).toBe(429)
    expect(res.headers['retry-after']).toBe('1')
  })

  it('sends a string, Buffer or object body as given', async () => {
    fake.failNext(1, { status: 502, body: '<html>bad gateway</html>', headers: { 'content-type': 'text/html' } })
    fake.failNext(1, { status: 200, body: Buffer.from('not json') })
    fake.failNext(1, { body: { weird: true } })
    const html = await agents()
    expect(html.status).toBe(502)
    expect(html.text).toBe('<html>bad gateway</html>')
    expect(html.headers['content-type']).toBe('text/html')
    const buf = await agents()
    expect(buf.status).toBe(200)
    expect(buf.text).toBe('not json')
    const obj = await agents()
    expect(obj.status).toBe(500)
    expect(obj.json).toEqual({ weird: true })
    expect(obj.headers['content-type']).toBe('application/json; charset=utf-8')
  })

  it('adds headers to the normal response when there is no status or body', async () => {
    fake.failNext(1, { headers: { 'x-extra': 'yes' } })
    const res = await agents()
    expect(res.status).toBe(200)
    expect(res.headers['x-extra']).toBe('yes')
    expect(res.json.data).toHaveLength(3)
  })

  it('applies to exactly n requests, FIFO across calls', async () => {
    fake.failNext(2, { status: 500 })
    fake.failNext(1, { status: 502 })
    const statuses = []
    for (let i = 0; i < 4; i++) statuses.push((await agents()).status)
    expect(statuses).toEqual([500, 500, 502, 200])
  })

  it('only consumes the fault on matching method and path (string or RegExp)', async () => {
    fake.failNext(1, { status: 500, match: { method: 'put', path: '/rest/v1/customer-users/u_1' } })
    fake.failNext(1, { status: 504, match: { path: /\/messages$/ } })
    expect((await agents()).status).toBe(200)
    expect((await call(url, 'PUT', '/rest/v1/customer-users/u_2', { body: { ...KEY_A, name: 'x' } })).status).toBe(200)
    expect((await rename('x')).status).toBe(500)
    expect((await rename('x')).status).toBe(200)
    expect((await call(url, 'GET', '/rest/v1/conversations', { body: KEY_A })).status).toBe(200)
    expect((await call(url, 'GET', '/rest/v1/conversations/conv_1/messages', { body: KEY_A })).status).toBe(504)
  })

  it('delayMs delays the headers of an otherwise normal response', async () => {
    fake.failNext(1, { delayMs: 200 })
    const { res, tHeaders } = await timed('/rest/v1/agents')
    expect(tHeaders).toBeGreaterThanOrEqual(150)
    expect(res.statusCode).toBe(200)
    expect(((await res.body.json()) as { data: unknown[] }).data).toHaveLength(3)
  })

  it('bodyDelayMs sends the headers and part of the body, then the rest later', async () => {
    fake.failNext(1, { bodyDelayMs: 250 })
    const { res, tHeaders, t0 } = await timed('/rest/v1/agents')
    expect(res.statusCode).toBe(200)
    const body = (await res.body.json()) as { data: unknown[] }
    const tBody = performance.now() - t0
    expect(tBody - tHeaders).toBeGreaterThanOrEqual(150)
    expect(body.data).toHaveLength(3)
  })

  it("dropConnection 'before-headers' resets the connection and does not process the request", async () => {
    fake.failNext(1, { dropConnection: 'before-headers' })
    await expect(rename('Dropped')).rejects.toMatchObject({ code: expect.stringMatching(/ECONNRESET|UND_ERR_SOCKET/) as unknown })
    expect(fake.getCustomerUser('co_a', 'u_1')?.name).toBe('Alice Smith')
    expect(fake.requests.map((r) => r.method)).toEqual(['PUT'])
    expect((await rename('After')).status).toBe(200)
  })

  it("dropConnection 'mid-body' sends headers, part of the body, then drops (the request was processed)", async () => {
    fake.failNext(1, { dropConnection: 'mid-body' })
    const { res } = await timed('/rest/v1/customer-users/u_1', 'PUT', { ...KEY_A, name: 'Processed' })
    expect(res.statusCode).toBe(200)
    await expect(res.body.text()).rejects.toThrow()
    expect(fake.getCustomerUser('co_a', 'u_1')?.name).toBe('Processed')
    expect((await agents()).status).toBe(200)
  })

  it('combines a synthetic status with a delay', async () => {
    fake.failNext(1, { status: 500, delayMs: 150 })
    const { res, tHeaders } = await timed('/rest/v1/agents')
    expect(res.statusCode).toBe(500)
    await res.body.dump()
    expect(tHeaders).toBeGreaterThanOrEqual(100)
  })

  it('rejects invalid fault specs', () => {
    expect(() => {
      fake.failNext(-1, { status: 500 })
    }).toThrow(RangeError)
    expect(() => {
      fake.failNext(1.5, { status: 500 })
    }).toThrow(RangeError)
    expect(() => {
      fake.failNext(1, { delayMs: -1 })
    }).toThrow(RangeError)
    expect(() => {
      fake.failNext(1, { status: 99 })
    }).toThrow(RangeError)
  })

  it('reset() and clearFaults() drop queued faults', async () => {
    fake.failNext(5, { status: 500 })
    fake.clearFaults()
    expect((await agents()).status).toBe(200)
    fake.failNext(5, { status: 500 })
    fake.reset()
    expect((await agents()).status).toBe(200)
  })
})

describe('latencyMs and close()', () => {
  it('latencyMs delays every response', async () => {
    const slow = createFakeChatService({ seed: fixtureSeed(), latencyMs: 120 })
    const s = await slow.listen()
    try {
      for (let i = 0; i < 2; i++) {
        const t0 = performance.now()
        const res = await call(s.url, 'GET', '/rest/v1/agents', { body: KEY_A })
        expect(res.status).toBe(200)
        expect(performance.now() - t0).toBeGreaterThanOrEqual(90)
      }
    } finally {
      await s.close()
    }
  })

  it('close() ends keep-alive and in-flight connections', async () => {
    const f = createFakeChatService({ seed: fixtureSeed() })
    const s = await f.listen()
    expect((await call(s.url, 'GET', '/rest/v1/agents', { body: KEY_A })).status).toBe(200) // leaves a keep-alive socket
    f.failNext(1, { delayMs: 60_000 })
    const pending = call(s.url, 'GET', '/rest/v1/agents', { body: KEY_A })
    pending.catch(() => {})
    while (f.requests.length < 2) await new Promise((r) => setTimeout(r, 5))
    await s.close()
    await expect(pending).rejects.toThrow()
    await expect(call(s.url, 'GET', '/rest/v1/agents', { body: KEY_A })).rejects.toMatchObject({ code: 'ECONNREFUSED' })
    await s.close() // idempotent
  }, 5_000)
})

describe('requests recording', () => {
  it('records method, raw path, query, headers, parsed body and time', async () => {
    const before = Date.now()
    await call(url, 'PUT', '/rest/v1/customer-users/u%2Fslash?x=1&y=a%20b&x=2', {
      body: { ...KEY_A, name: 'R' },
      headers: { 'X-Trace': 'abc' },
    })
    expect(fake.requests).toHaveLength(1)
    const r = fake.requests[0]!
    expect(r).toMatchObject({
      method: 'PUT',
      path: '/rest/v1/customer-users/u%2Fslash',
      rawPath: '/rest/v1/customer-users/u%2Fslash?x=1&y=a%20b&x=2',
      query: { x: '1', y: 'a b' },
      body: { keyId: 'key_a', keySecret: 'secret_a', name: 'R' },
      rawBody: JSON.stringify({ ...KEY_A, name: 'R' }),
      bodyVisible: true,
    })
    expect(r.headers['content-type']).toBe('application/json')
    expect(r.headers['x-trace']).toBe('abc')
    expect(r.time).toBeGreaterThanOrEqual(before)
    expect(r.time).toBeLessThanOrEqual(Date.now())
  })

  it('records GET bodies, non-JSON bodies as text, and no body as undefined', async () => {
    await call(url, 'GET', '/rest/v1/agents?page=2', { body: KEY_A })
    await call(url, 'GET', '/rest/v1/agents', { rawBody: 'plain text', contentType: 'text/plain' })
    await call(url, 'GET', '/rest/v1/agents')
    const [withBody, text, none] = fake.requests
    expect(withBody).toMatchObject({ method: 'GET', path: '/rest/v1/agents', query: { page: '2' }, body: KEY_A, bodyVisible: true })
    expect(text).toMatchObject({ body: 'plain text', rawBody: 'plain text' })
    expect(none).toMatchObject({ body: undefined, rawBody: undefined, bodyVisible: true })
  })

  it('records requests that got a fault; clearRequests() and reset() empty the list', async () => {
    fake.failNext(1, { status: 500 })
    await agents()
    expect(fake.requests).toHaveLength(1)
    fake.clearRequests()
    expect(fake.requests).toHaveLength(0)
    await agents()
    fake.reset()
    expect(fake.requests).toHaveLength(0)
  })

  it('records nothing with recordRequests: false', async () => {
    const quiet = createFakeChatService({ seed: fixtureSeed(), recordRequests: false })
    const s = await quiet.listen()
    try {
      expect((await call(s.url, 'GET', '/rest/v1/agents', { body: KEY_A })).status).toBe(200)
      expect(quiet.requests).toHaveLength(0)
    } finally {
      await s.close()
    }
  })
})

describe('seed and reset', () => {
  it('reset() restores the seed option’s data', async () => {
    await rename('Changed')
    await call(url, 'POST', '/rest/v1/auth/token', { body: { ...KEY_A, userId: 'created' } })
    expect(fake.listCustomerUsers('co_a')).toHaveLength(5)
    fake.reset()
    expect(fake.getCustomerUser('co_a', 'u_1')?.name).toBe('Alice Smith')
    expect(fake.listCustomerUsers('co_a')).toHaveLength(4)
  })

  it('seed() adds companies and rejects duplicates or dangling messages', async () => {
    fake.seed({
      companies: [
        {
          id: 'co_new',
          keys: [{ keyId: 'k_new', keySecret: 's_new' }],
          agents: [{ id: 'a', name: 'A', active: true, created_at: '2024-01-01T00:00:00.000Z', updated_at: '2024-01-01T00:00:00.000Z' }],
        },
      ],
    })
    expect(fake.companyIds()).toEqual(['co_a', 'co_b', 'co_empty', 'co_new'])
    expect(
      (await call<ListBody<AgentRecord>>(url, 'GET', '/rest/v1/agents', { body: { keyId: 'k_new', keySecret: 's_new' } })).json.data,
    ).toHaveLength(1)
    expect(() => {
      fake.seed({
        companies: [{ id: 'co_a', keys: [], agents: [{ id: 'agt_1', name: 'dup', active: true, created_at: 'x', updated_at: 'x' }] }],
      })
    }).toThrow(/duplicate agent/)
    expect(() => {
      fake.seed({ companies: [{ id: 'co_x', keys: [KEY_A] }] })
    }).toThrow(/already registered/)
    expect(() => {
      fake.seed({
        companies: [
          { id: 'co_a', keys: [], messages: [{ id: 'm', content: 'c', role: 'user', conversation_id: 'conv_b', created_at: 'x' }] },
        ],
      })
    }).toThrow(/unknown conversation/)
    // a failing seed applies nothing
    expect(() => {
      fake.seed({
        companies: [
          { id: 'co_ok', keys: [{ keyId: 'k_ok', keySecret: 's' }] },
          {
            id: 'co_bad',
            keys: [],
            conversations: [
              { id: 'c', title: 't', customer_user_id: 'u', created_at: 'x', updated_at: 'x' },
              { id: 'c', title: 't', customer_user_id: 'u', created_at: 'x', updated_at: 'x' },
            ],
          },
        ],
      })
    }).toThrow(/duplicate conversation/)
    expect(fake.companyIds()).toEqual(['co_a', 'co_b', 'co_empty', 'co_new'])
    expect(fake.listAgents('co_a')).toHaveLength(3)
  })
})
