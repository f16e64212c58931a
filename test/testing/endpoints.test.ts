import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  createFakeChatService,
  generateDataset,
  type AgentRecord,
  type ConversationRecord,
  type CustomerUserRecord,
  type FakeChatService,
  type FakeServerHandle,
  type MessageRecord,
  type UpdatedCustomerUserRecord,
} from '../../src/testing/index.ts'
import { call, ENDPOINTS, fixtureSeed, KEY_A, KEY_B, KEY_EMPTY, type ErrorBody, type ListBody, type MessagesBody } from './helpers.ts'

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

const get = <T = unknown>(path: string, body: unknown = KEY_A) => call<T>(url, 'GET', path, { body })
const put = <T = unknown>(path: string, body: unknown) => call<T>(url, 'PUT', path, { body })

type Users = ListBody<CustomerUserRecord>
type Messages = MessagesBody<MessageRecord>

describe('listen()', () => {
  it('serves on a loopback origin', () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
  })
})

describe('routing', () => {
  it('answers an unknown path with 404 and the fake error body', async () => {
    const res = await get('/rest/v1/nope')
    expect(res.status).toBe(404)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(res.json).toEqual({ error: { status: 404, message: expect.any(String) as unknown } })
  })

  it('does not accept the doubled prefix /rest/v1/v1/', async () => {
    for (const path of ['/rest/v1/v1/agents', '/rest/v1/v1/customer-users', '/rest/v1/v1/conversations/conv_1/messages']) {
      expect((await get(path)).status, path).toBe(404)
    }
    expect((await call(url, 'POST', '/rest/v1/v1/auth/token', { body: { ...KEY_A, userId: 'x' } })).status).toBe(404)
  })

  it('rejects paths outside /rest/v1 and trailing slashes', async () => {
    for (const path of ['/agents', '/rest/v2/agents', '/rest/agents', '/rest/v1/agents/', '/REST/v1/agents', '/rest/v1/customer-users/']) {
      expect((await get(path)).status, path).toBe(404)
    }
  })

  it('answers a wrong method with 405 and Allow', async () => {
    const cases = [
      ['POST', '/rest/v1/agents', 'GET'],
      ['GET', '/rest/v1/auth/token', 'POST'],
      ['DELETE', '/rest/v1/customer-users/u_1', 'PUT'],
      ['PUT', '/rest/v1/customer-users', 'GET'],
      ['PATCH', '/rest/v1/customer-users/u_1', 'PUT'],
      ['POST', '/rest/v1/conversations/conv_1/messages', 'GET'],
    ] as const
    for (const [method, path, allow] of cases) {
      const res = await call<ErrorBody>(url, method, path, { body: KEY_A })
      expect(res.status, `${method} ${path}`).toBe(405)
      expect(res.headers['allow']).toBe(allow)
      expect(res.json.error.status).toBe(405)
    }
  })

  it('sends success responses as application/json; charset=utf-8', async () => {
    const res = await get('/rest/v1/agents')
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
  })
})

describe('authentication', () => {
  it.each(ENDPOINTS)('$method $path: 401 without a body', async ({ method, path }) => {
    const res = await call<ErrorBody>(url, method, path)
    expect(res.status).toBe(401)
    expect(res.json.error.status).toBe(401)
  })

  it.each(ENDPOINTS)('$method $path: 401 with invalid or incomplete credentials', async ({ method, path, extra }) => {
    const bodies = [
      { keyId: KEY_A.keyId, keySecret: 'wrong', ...extra },
      { keyId: 'unknown', keySecret: KEY_A.keySecret, ...extra },
      { keyId: KEY_A.keyId, ...extra },
      { keySecret: KEY_A.keySecret, ...extra },
      { keyId: KEY_A.keyId, keySecret: KEY_B.keySecret, ...extra },
      { keyId: 1, keySecret: 2, ...extra },
      { ...extra },
    ]
    for (const body of bodies) {
      const res = await call(url, method, path, { body })
      expect(res.status, JSON.stringify(body)).toBe(401)
    }
  })

  it.each(ENDPOINTS)('$method $path: credentials in headers or the query string do not count', async ({ method, path, extra }) => {
    const viaHeaders = await call(url, method, path, {
      body: { ...extra },
      headers: {
        keyid: KEY_A.keyId,
        keysecret: KEY_A.keySecret,
        'x-key-id': KEY_A.keyId,
        'x-key-secret': KEY_A.keySecret,
        authorization: `Basic ${Buffer.from(`${KEY_A.keyId}:${KEY_A.keySecret}`).toString('base64')}`,
      },
    })
    expect(viaHeaders.status).toBe(401)
    const sep = path.includes('?') ? '&' : '?'
    const viaQuery = await call(url, method, `${path}${sep}keyId=${KEY_A.keyId}&keySecret=${KEY_A.keySecret}`, { body: { ...extra } })
    expect(viaQuery.status).toBe(401)
  })

  it.each(ENDPOINTS)('$method $path: accepts credentials in the JSON body (GET included)', async ({ method, path, extra }) => {
    const res = await call(url, method, path, { body: { ...KEY_A, ...extra } })
    expect(res.status).toBe(200)
  })

  it('ignores a JSON-looking body sent without a JSON content-type (credentials missing)', async () => {
    expect((await call(url, 'GET', '/rest/v1/agents', { body: KEY_A, contentType: 'text/plain' })).status).toBe(401)
    expect((await call(url, 'GET', '/rest/v1/agents', { body: KEY_A, contentType: null })).status).toBe(401)
    expect((await call(url, 'GET', '/rest/v1/agents', { body: KEY_A, contentType: 'application/json; charset=utf-8' })).status).toBe(200)
  })
})

describe('400 for bad input', () => {
  const lists = ['/rest/v1/customer-users', '/rest/v1/agents', '/rest/v1/conversations', '/rest/v1/conversations/conv_1/messages']
  const badQueries = [
    'page=0',
    'page=-1',
    'page=1.5',
    'page=abc',
    'page=',
    'page=1e2',
    'page=%201',
    'page=1&page=2',
    'limit=0',
    'limit=101',
    'limit=-5',
    'limit=2.5',
    'limit=ten',
    'limit=',
    'limit=1000',
    'page=99999999999999999999',
  ]

  it.each(lists)('GET %s: bad page/limit → 400', async (path) => {
    for (const q of badQueries) {
      const res = await get<ErrorBody>(`${path}?${q}`)
      expect(res.status, q).toBe(400)
      expect(res.json.error.status).toBe(400)
    }
    expect((await get(`${path}?page=1&limit=100`)).status).toBe(200)
    expect((await get(`${path}?page=007&limit=1`)).status).toBe(200)
  })

  it.each(ENDPOINTS)('$method $path: malformed JSON or a non-object body → 400', async ({ method, path }) => {
    for (const rawBody of ['{"keyId": "key_a", ', '[1,2]', '"key_a"', '42', 'null', 'true']) {
      const res = await call(url, method, path, { rawBody })
      expect(res.status, rawBody).toBe(400)
    }
  })

  it('update: fields of the wrong type → 400 and no change', async () => {
    const before = fake.getCustomerUser('co_a', 'u_1')
    for (const field of [
      { name: 5 },
      { name: null },
      { email: true },
      { email: ['a'] },
      { metadata: [] },
      { metadata: 'x' },
      { metadata: null },
      { metadata: 3 },
    ]) {
      const res = await put('/rest/v1/customer-users/u_1', { ...KEY_A, ...field })
      expect(res.status, JSON.stringify(field)).toBe(400)
    }
    expect(fake.getCustomerUser('co_a', 'u_1')).toEqual(before)
  })

  it('customer-user filters of the wrong type → 400', async () => {
    for (const filter of [{ name: 1 }, { email: null }, { external_id: ['ext_1'] }, { external_id: { eq: 'ext_1' } }]) {
      expect((await get('/rest/v1/customer-users', { ...KEY_A, ...filter })).status, JSON.stringify(filter)).toBe(400)
    }
  })

  it('malformed percent-encoding in a path id → 400', async () => {
    expect((await get('/rest/v1/conversations/%E0%A4%A/messages')).status).toBe(400)
    expect((await put('/rest/v1/customer-users/%zz', { ...KEY_A, name: 'x' })).status).toBe(400)
  })
})

describe('500', () => {
  it('answers 500 (and keeps serving) when the fake cannot serialise seeded data', async () => {
    fake.seed({
      companies: [
        {
          id: 'co_odd',
          keys: [{ keyId: 'k_odd', keySecret: 's_odd' }],
          customerUsers: [
            { id: 'u', external_id: 'e', name: 'n', email: 'e@x', metadata: { big: 1n }, active: true, created_at: 'x', last_seen_at: 'x' },
          ],
        },
      ],
    })
    const res = await get<ErrorBody>('/rest/v1/customer-users', { keyId: 'k_odd', keySecret: 's_odd' })
    expect(res.status).toBe(500)
    expect(res.json.error.status).toBe(500)
    expect((await get('/rest/v1/customer-users')).status).toBe(200)
  })
})

describe('GET /rest/v1/customer-users', () => {
  it('lists the company users with the spec fields, ordered by created_at then id, default paging', async () => {
    const res = await get<Users>('/rest/v1/customer-users')
    expect(res.status).toBe(200)
    expect(res.json.pagination).toEqual({ page: 1, limit: 20, total: 4, total_pages: 1 })
    expect(res.json.data.map((u: { id: string }) => u.id)).toEqual(['u_1', 'u_2', 'u_3', 'u/slash'])
    expect(res.json.data[0]).toStrictEqual({
      id: 'u_1',
      external_id: 'ext_1',
      name: 'Alice Smith',
      email: 'alice@example.com',
      metadata: { version: 1, tier: 'gold', prefs: { lang: 'de' } },
      active: true,
      created_at: '2024-01-01T00:10:00.000Z',
      last_seen_at: '2024-01-01T00:15:00.000Z',
    })
    const other = await get<Users>('/rest/v1/customer-users', KEY_B)
    expect(other.json.data.map((u: { id: string }) => u.id)).toEqual(['u_b1'])
  })

  it('filters by body fields, exactly by default', async () => {
    const ids = async (filter: object) =>
      (await get<Users>('/rest/v1/customer-users', { ...KEY_A, ...filter })).json.data.map((u: { id: string }) => u.id)
    expect(await ids({ name: 'Alice Smith' })).toEqual(['u_1'])
    expect(await ids({ name: 'Alice' })).toEqual([])
    expect(await ids({ name: 'alice smith' })).toEqual([])
    expect(await ids({ email: 'bob@example.com' })).toEqual(['u_2'])
    expect(await ids({ email: 'example.com' })).toEqual([])
    expect(await ids({ external_id: 'ext_1' })).toEqual(['u_1']) // not company B's ext_1
    expect(await ids({ external_id: 'ext_3', name: 'Alice Jones' })).toEqual(['u_3'])
    expect(await ids({ external_id: 'ext_3', name: 'Alice Smith' })).toEqual([])
    const res = await get<Users>('/rest/v1/customer-users', { ...KEY_A, name: 'Alice Smith' })
    expect(res.json.pagination).toEqual({ page: 1, limit: 20, total: 1, total_pages: 1 })
  })

  it('ignores filters in the query string', async () => {
    const res = await get<Users>('/rest/v1/customer-users?name=Alice%20Smith&external_id=ext_1&email=bob%40example.com')
    expect(res.json.data).toHaveLength(4)
  })

  it("matches name/email partially and case-insensitively with filterMatch 'partial' (external_id stays exact)", async () => {
    const partial = createFakeChatService({ seed: fixtureSeed(), filterMatch: 'partial' })
    const s = await partial.listen()
    try {
      const ids = async (filter: object) =>
        (await call<Users>(s.url, 'GET', '/rest/v1/customer-users', { body: { ...KEY_A, ...filter } })).json.data.map(
          (u: { id: string }) => u.id,
        )
      expect(await ids({ name: 'alice' })).toEqual(['u_1', 'u_3'])
      expect(await ids({ email: 'EXAMPLE.COM' })).toEqual(['u_1', 'u_2', 'u/slash'])
      expect(await ids({ name: 'alice', email: '.org' })).toEqual(['u_3'])
      expect(await ids({ external_id: 'ext' })).toEqual([])
      expect(await ids({ external_id: 'ext_2' })).toEqual(['u_2'])
    } finally {
      await s.close()
    }
  })
})

describe('PUT /rest/v1/customer-users/:id', () => {
  it('changes only supplied fields and returns exactly the update shape', async () => {
    const res = await put<UpdatedCustomerUserRecord>('/rest/v1/customer-users/u_1', { ...KEY_A, name: 'Alice Cooper' })
    expect(res.status).toBe(200)
    expect(Object.keys(res.json).sort()).toEqual(['active', 'email', 'external_id', 'id', 'metadata', 'name', 'updated_at'])
    expect(res.json).toMatchObject({
      id: 'u_1',
      external_id: 'ext_1',
      name: 'Alice Cooper',
      email: 'alice@example.com',
      metadata: { version: 1, tier: 'gold', prefs: { lang: 'de' } },
      active: true,
    })
    const stored = fake.getCustomerUser('co_a', 'u_1')
    expect(stored?.name).toBe('Alice Cooper')
    expect(stored?.email).toBe('alice@example.com')
    expect(stored?.updated_at).toBe(res.json.updated_at)
    const listed = (await get<Users>('/rest/v1/customer-users', { ...KEY_A, external_id: 'ext_1' })).json.data[0]!
    expect(listed.name).toBe('Alice Cooper')
    expect(listed).not.toHaveProperty('updated_at')
  })

  it('replaces metadata (no merge) and updates email', async () => {
    const res = await put<UpdatedCustomerUserRecord>('/rest/v1/customer-users/u_1', {
      ...KEY_A,
      email: 'new@example.com',
      metadata: { version: 2, nested: { a: [1, 2] } },
    })
    expect(res.json.metadata).toEqual({ version: 2, nested: { a: [1, 2] } })
    expect(res.json.email).toBe('new@example.com')
    expect(res.json.name).toBe('Alice Smith')
    expect(fake.getCustomerUser('co_a', 'u_1')?.metadata).toEqual({ version: 2, nested: { a: [1, 2] } })
  })

  it('moves updated_at forward, even with a frozen clock', async () => {
    const frozen = new Date('2030-01-01T00:00:00.000Z')
    const f = createFakeChatService({ seed: fixtureSeed(), now: () => frozen })
    const s = await f.listen()
    try {
      const first = await call<UpdatedCustomerUserRecord>(s.url, 'PUT', '/rest/v1/customer-users/u_2', { body: { ...KEY_A, name: 'B1' } })
      const second = await call<UpdatedCustomerUserRecord>(s.url, 'PUT', '/rest/v1/customer-users/u_2', { body: { ...KEY_A, name: 'B2' } })
      expect(first.json.updated_at).toBe('2030-01-01T00:00:00.000Z')
      expect(Date.parse(second.json.updated_at)).toBeGreaterThan(Date.parse(first.json.updated_at))
    } finally {
      await s.close()
    }
  })

  it('404 for an unknown id and for another company’s user (which stays unchanged)', async () => {
    expect((await put('/rest/v1/customer-users/nope', { ...KEY_A, name: 'x' })).status).toBe(404)
    const res = await put<ErrorBody>('/rest/v1/customer-users/u_b1', { ...KEY_A, name: 'hijacked' })
    expect(res.status).toBe(404)
    expect(res.json.error.status).toBe(404)
    expect(fake.getCustomerUser('co_b', 'u_b1')?.name).toBe('Other Company User')
    expect((await put('/rest/v1/customer-users/u_b1', { ...KEY_B, name: 'ok' })).status).toBe(200)
  })

  it('percent-decodes the id exactly once', async () => {
    const res = await put<UpdatedCustomerUserRecord>('/rest/v1/customer-users/u%2Fslash', { ...KEY_A, name: 'Decoded' })
    expect(res.status).toBe(200)
    expect(res.json.id).toBe('u/slash')
    expect(fake.getCustomerUser('co_a', 'u/slash')?.name).toBe('Decoded')
    // decoding twice would turn u%252Fslash into u/slash; once gives u%2Fslash, which does not exist
    expect((await put('/rest/v1/customer-users/u%252Fslash', { ...KEY_A, name: 'x' })).status).toBe(404)
    // an unencoded slash is another path
    expect((await put('/rest/v1/customer-users/u/slash', { ...KEY_A, name: 'x' })).status).toBe(404)
  })
})

describe('GET /rest/v1/agents', () => {
  it('lists all agents of the company, active or not, by created_at then id', async () => {
    const res = await get<ListBody<AgentRecord>>('/rest/v1/agents')
    expect(res.json.data).toStrictEqual([
      { id: 'agt_1', name: 'Support', active: true, created_at: '2024-01-01T00:01:00.000Z', updated_at: '2024-01-01T00:01:00.000Z' },
      { id: 'agt_0', name: 'Billing', active: true, created_at: '2024-01-01T00:02:00.000Z', updated_at: '2024-01-01T00:02:00.000Z' },
      { id: 'agt_2', name: 'Sales', active: false, created_at: '2024-01-01T00:02:00.000Z', updated_at: '2024-01-01T00:03:00.000Z' },
    ])
    expect(res.json.pagination).toEqual({ page: 1, limit: 20, total: 3, total_pages: 1 })
  })
})

describe('GET /rest/v1/conversations', () => {
  it('lists conversations with message_count from the messages when there are any', async () => {
    const res = await get<ListBody<ConversationRecord>>('/rest/v1/conversations')
    expect(res.json.data).toStrictEqual([
      {
        id: 'conv_1',
        title: 'Order status',
        customer_user_id: 'u_1',
        message_count: 4,
        created_at: '2024-01-01T01:40:00.000Z',
        updated_at: '2024-01-01T01:50:00.000Z',
      },
      {
        id: 'conv_declared',
        title: 'Imported',
        customer_user_id: 'u_2',
        message_count: 7,
        created_at: '2024-01-01T02:00:00.000Z',
        updated_at: '2024-01-01T02:00:00.000Z',
      },
      {
        id: 'conv/2 ü',
        title: 'Odd id',
        customer_user_id: 'u_2',
        message_count: 1,
        created_at: '2024-01-01T02:10:00.000Z',
        updated_at: '2024-01-01T02:11:00.000Z',
      },
    ])
    const messages = await get<Messages>('/rest/v1/conversations/conv_1/messages')
    expect(messages.json.pagination.total).toBe(res.json.data[0]!.message_count)
  })

  it('switches message_count to the message count once messages are seeded', async () => {
    fake.seed({
      companies: [
        {
          id: 'co_a',
          keys: [],
          messages: [
            { id: 'late_1', content: 'x', role: 'user', conversation_id: 'conv_declared', created_at: '2024-01-01T03:00:00.000Z' },
          ],
        },
      ],
    })
    const res = await get<ListBody<ConversationRecord>>('/rest/v1/conversations')
    expect(res.json.data[1]).toMatchObject({ id: 'conv_declared', message_count: 1 })
    expect((await get<Messages>('/rest/v1/conversations/conv_declared/messages')).json.pagination.total).toBe(1)
  })
})

describe('GET /rest/v1/conversations/:id/messages', () => {
  it('returns messages oldest first (ties by id) with the conversation and default limit 50', async () => {
    const res = await get<Messages>('/rest/v1/conversations/conv_1/messages')
    expect(res.status).toBe(200)
    expect(res.json.data.map((m: { id: string }) => m.id)).toEqual(['m_first', 'm_a', 'm_b', 'm_c'])
    expect(res.json.data[0]).toStrictEqual({
      id: 'm_first',
      content: 'first',
      role: 'user',
      conversation_id: 'conv_1',
      created_at: '2024-01-01T01:41:00.000Z',
    })
    expect(res.json.conversation).toStrictEqual({ id: 'conv_1', title: 'Order status' })
    expect(res.json.pagination).toEqual({ page: 1, limit: 50, total: 4, total_pages: 1 })
  })

  it('404 for an unknown conversation and for another company’s conversation', async () => {
    expect((await get('/rest/v1/conversations/nope/messages')).status).toBe(404)
    const cross = await get<ErrorBody>('/rest/v1/conversations/conv_b/messages')
    expect(cross.status).toBe(404)
    expect(cross.json.error.status).toBe(404)
    expect((await get('/rest/v1/conversations/conv_b/messages', KEY_B)).status).toBe(200)
  })

  it('percent-decodes the conversation id once', async () => {
    const res = await get<Messages>(`/rest/v1/conversations/${encodeURIComponent('conv/2 ü')}/messages`)
    expect(res.status).toBe(200)
    expect(res.json.conversation).toEqual({ id: 'conv/2 ü', title: 'Odd id' })
    expect(res.json.data.map((m: { id: string }) => m.id)).toEqual(['m_odd'])
    expect((await get(`/rest/v1/conversations/${encodeURIComponent(encodeURIComponent('conv/2 ü'))}/messages`)).status).toBe(404)
  })
})

describe('paging math', () => {
  let big: FakeChatService
  let s: FakeServerHandle
  const data = generateDataset({ seed: 7, customerUsers: 45, conversations: 3, messages: 130, agents: 0 })
  const key = data.companies[0]!.keys[0]!

  beforeAll(async () => {
    big = createFakeChatService({ seed: data })
    s = await big.listen()
  })
  afterAll(async () => {
    await s.close()
  })
  const page = async <T>(path: string) => (await call<ListBody<T>>(s.url, 'GET', path, { body: key })).json

  it('splits 45 users into 20 + 20 + 5 and returns an empty page past the end', async () => {
    const sizes = []
    for (let p = 1; p <= 4; p++) {
      const res = await page<CustomerUserRecord>(`/rest/v1/customer-users?page=${p}`)
      expect(res.pagination).toEqual({ page: p, limit: 20, total: 45, total_pages: 3 })
      sizes.push(res.data.length)
    }
    expect(sizes).toEqual([20, 20, 5, 0])
    expect((await page<CustomerUserRecord>('/rest/v1/customer-users?page=1000')).data).toEqual([])
  })

  it('handles an exact multiple (45 / 15 = 3 pages)', async () => {
    const last = await page<CustomerUserRecord>('/rest/v1/customer-users?page=3&limit=15')
    expect(last.pagination).toEqual({ page: 3, limit: 15, total: 45, total_pages: 3 })
    expect(last.data).toHaveLength(15)
    expect((await page<CustomerUserRecord>('/rest/v1/customer-users?page=4&limit=15')).data).toEqual([])
  })

  it('reports total 0 and total_pages 0 for an empty list', async () => {
    expect(await page<AgentRecord>('/rest/v1/agents')).toEqual({ data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } })
    const empty = await get('/rest/v1/conversations', KEY_EMPTY)
    expect(empty.json).toEqual({ data: [], pagination: { page: 1, limit: 20, total: 0, total_pages: 0 } })
  })

  it('reading pages while page < total_pages yields every record exactly once, in order', async () => {
    for (const limit of [1, 7, 20, 45, 100]) {
      const ids: string[] = []
      let p = 1
      for (;;) {
        const res = await page<CustomerUserRecord>(`/rest/v1/customer-users?page=${p}&limit=${limit}`)
        ids.push(...res.data.map((u: { id: string }) => u.id))
        if (p >= res.pagination.total_pages) break
        p++
      }
      expect(ids, `limit ${limit}`).toEqual(big.listCustomerUsers('comp_1').map((u) => u.id))
      expect(new Set(ids).size).toBe(45)
    }
  })

  it('pages messages with the default limit 50 and keeps message_count consistent', async () => {
    const conversations = (await page<ConversationRecord>('/rest/v1/conversations')).data
    expect(conversations.reduce((sum, c) => sum + c.message_count, 0)).toBe(130)
    for (const conv of conversations) {
      const first = await page<MessageRecord>(`/rest/v1/conversations/${conv.id}/messages`)
      expect(first.pagination.total).toBe(conv.message_count)
      expect(first.pagination.total_pages).toBe(Math.ceil(conv.message_count / 50))
      expect(first.data).toHaveLength(Math.min(50, conv.message_count))
    }
  })
})
