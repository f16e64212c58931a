import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createFakeChatService, type CustomerUserRecord, type FakeChatService, type FakeServerHandle } from '../../src/testing/index.ts'
import { call, fixtureSeed, KEY_A, type ErrorBody, type ListBody, type TokenBody } from './helpers.ts'

let clock: Date
let fake: FakeChatService
let server: FakeServerHandle

beforeEach(async () => {
  clock = new Date('2025-06-01T12:00:00.000Z')
  fake = createFakeChatService({ seed: fixtureSeed(), now: () => clock, tokenSecret: 'test-secret' })
  server = await fake.listen()
})
afterEach(async () => {
  await server.close()
})

const issue = <T = TokenBody>(body: Record<string, unknown>) =>
  call<T>(server.url, 'POST', '/rest/v1/auth/token', { body: { ...KEY_A, ...body } })
const NOW_S = Date.parse('2025-06-01T12:00:00.000Z') / 1000

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>

describe('POST /rest/v1/auth/token', () => {
  it('issues a token for an existing user bound to an agent', async () => {
    const res = await issue({ userId: 'ext_1', agentId: 'agt_1' })
    expect(res.status).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(Object.keys(res.json).sort()).toEqual(['agent', 'token', 'user'])
    expect(res.json.user).toStrictEqual({ id: 'u_1', externalId: 'ext_1', companyId: 'co_a', agentId: 'agt_1' })
    expect(res.json.agent).toStrictEqual({ id: 'agt_1', name: 'Support', active: true })
    const [header, payload] = res.json.token.split('.') as [string, string, string]
    expect(decode(header)).toEqual({ alg: 'HS256', typ: 'JWT' })
    expect(decode(payload)).toEqual({
      sub: 'u_1',
      external_id: 'ext_1',
      company_id: 'co_a',
      agent_id: 'agt_1',
      iat: NOW_S,
      exp: NOW_S + 86400,
    })
    expect(fake.verifyToken(res.json.token)).toEqual({
      valid: true,
      claims: { sub: 'u_1', external_id: 'ext_1', company_id: 'co_a', agent_id: 'agt_1', iat: NOW_S, exp: NOW_S + 86400 },
    })
    expect(fake.getCustomerUser('co_a', 'u_1')?.last_seen_at).toBe('2025-06-01T12:00:00.000Z')
    expect(fake.listCustomerUsers('co_a')).toHaveLength(4)
  })

  it('returns agent: null and user.agentId: null without agentId', async () => {
    const res = await issue({ userId: 'ext_2' })
    expect(res.status).toBe(200)
    expect(res.json.agent).toBeNull()
    expect(res.json.user).toStrictEqual({ id: 'u_2', externalId: 'ext_2', companyId: 'co_a', agentId: null })
    const check = fake.verifyToken(res.json.token)
    expect(check.valid && check.claims.agent_id).toBeNull()
  })

  it('creates a missing user (name/email null, empty metadata, active) and reuses it next time', async () => {
    const first = await issue({ userId: 'brand-new' })
    expect(first.status).toBe(200)
    const id = first.json.user.id
    expect(id).toMatch(/\S/)
    expect(fake.getCustomerUser('co_a', id)).toStrictEqual({
      id,
      external_id: 'brand-new',
      name: null,
      email: null,
      metadata: {},
      active: true,
      created_at: '2025-06-01T12:00:00.000Z',
      last_seen_at: '2025-06-01T12:00:00.000Z',
      updated_at: '2025-06-01T12:00:00.000Z',
    })
    clock = new Date('2025-06-02T00:00:00.000Z')
    const second = await issue({ userId: 'brand-new', agentId: 'agt_0' })
    expect(second.json.user.id).toBe(id)
    expect(fake.listCustomerUsers('co_a').filter((u) => u.external_id === 'brand-new')).toHaveLength(1)
    expect(fake.getCustomerUser('co_a', id)?.last_seen_at).toBe('2025-06-02T00:00:00.000Z')
    const listed = await call<ListBody<CustomerUserRecord>>(server.url, 'GET', '/rest/v1/customer-users', {
      body: { ...KEY_A, external_id: 'brand-new' },
    })
    expect(listed.json.data).toEqual([expect.objectContaining({ id, name: null, email: null, metadata: {}, active: true })])
    // the same external id in another company is another user
    expect(fake.findCustomerUserByExternalId('co_b', 'brand-new')).toBeUndefined()
  })

  it('still issues a token for an inactive agent and reports active: false', async () => {
    const res = await issue({ userId: 'ext_1', agentId: 'agt_2' })
    expect(res.status).toBe(200)
    expect(res.json.agent).toStrictEqual({ id: 'agt_2', name: 'Sales', active: false })
  })

  it.each([
    ['1h', 3600],
    ['2h', 7200],
    ['3d', 3 * 86400],
    ['48h', 48 * 3600],
  ])('honours expiresIn %s', async (expiresIn, seconds) => {
    const res = await issue({ userId: 'ext_1', expiresIn })
    const check = fake.verifyToken(res.json.token)
    expect(check.valid && check.claims.exp - check.claims.iat).toBe(seconds)
  })

  it('400 for a bad userId, agentId or expiresIn, creating nobody', async () => {
    const bad = [
      {},
      { userId: '' },
      { userId: 12 },
      { userId: null },
      { userId: 'u', agentId: 5 },
      { userId: 'u', agentId: '' },
      { userId: 'u', agentId: null },
      ...['0h', '1m', '1.5h', 'h', '1H', ' 1h', '-1d', '1', '', '1hd', '99999999999999999999d'].map((e) => ({ userId: 'u', expiresIn: e })),
      { userId: 'u', expiresIn: 3600 },
    ]
    for (const body of bad) {
      const res = await issue(body)
      expect(res.status, JSON.stringify(body)).toBe(400)
    }
    expect(fake.findCustomerUserByExternalId('co_a', 'u')).toBeUndefined()
  })

  it('404 for an unknown or another company’s agent, creating nobody', async () => {
    expect((await issue({ userId: 'new-1', agentId: 'nope' })).status).toBe(404)
    const cross = await issue<ErrorBody>({ userId: 'new-1', agentId: 'agt_b' })
    expect(cross.status).toBe(404)
    expect(cross.json.error.status).toBe(404)
    expect(fake.findCustomerUserByExternalId('co_a', 'new-1')).toBeUndefined()
  })
})

describe('verifyToken', () => {
  it('detects tampering with the claims or the signature', async () => {
    const token = (await issue({ userId: 'ext_1' })).json.token
    const [header, payload, signature] = token.split('.') as [string, string, string]
    const forged = b64({ ...decode(payload), sub: 'u_2' })
    expect(fake.verifyToken(`${header}.${forged}.${signature}`)).toEqual({ valid: false, reason: 'bad-signature' })
    const flipped = signature.slice(0, -2) + (signature.endsWith('AA') ? 'BB' : 'AA')
    expect(fake.verifyToken(`${header}.${payload}.${flipped}`)).toEqual({ valid: false, reason: 'bad-signature' })
    const other = createFakeChatService({ seed: fixtureSeed(), tokenSecret: 'another-secret', now: () => clock })
    const s = await other.listen()
    try {
      const foreign = (await call<TokenBody>(s.url, 'POST', '/rest/v1/auth/token', { body: { ...KEY_A, userId: 'ext_1' } })).json.token
      expect(other.verifyToken(foreign).valid).toBe(true)
      expect(fake.verifyToken(foreign)).toEqual({ valid: false, reason: 'bad-signature' })
    } finally {
      await s.close()
    }
  })

  it('reports expiry against the now option', async () => {
    const token = (await issue({ userId: 'ext_1', expiresIn: '1h' })).json.token
    clock = new Date(clock.getTime() + 3599_000)
    expect(fake.verifyToken(token).valid).toBe(true)
    clock = new Date(clock.getTime() + 1_000)
    expect(fake.verifyToken(token)).toEqual({ valid: false, reason: 'expired' })
    clock = new Date('2025-06-02T12:00:00.000Z')
    const day = (await issue({ userId: 'ext_1' })).json.token
    clock = new Date('2025-06-03T11:59:59.000Z')
    expect(fake.verifyToken(day).valid).toBe(true)
    clock = new Date('2025-06-03T12:00:01.000Z')
    expect(fake.verifyToken(day)).toEqual({ valid: false, reason: 'expired' })
  })

  it('reports malformed tokens', async () => {
    const token = (await issue({ userId: 'ext_1' })).json.token
    const [, payload, signature] = token.split('.') as [string, string, string]
    for (const bad of [
      '',
      'abc',
      'a.b',
      'a.b.c.d',
      `${token}.x`,
      'a b.c.d',
      `${b64('not an object')}.${payload}.${signature}`,
      `${b64({ alg: 'none' })}.${payload}.${signature}`,
    ]) {
      expect(fake.verifyToken(bad), bad).toEqual({ valid: false, reason: 'malformed' })
    }
  })

  it('is deterministic for a fixed tokenSecret and clock', async () => {
    const twin = createFakeChatService({ seed: fixtureSeed(), now: () => clock, tokenSecret: 'test-secret' })
    const s = await twin.listen()
    try {
      const a = (await issue({ userId: 'ext_1', agentId: 'agt_1' })).json.token
      const b = (await call<TokenBody>(s.url, 'POST', '/rest/v1/auth/token', { body: { ...KEY_A, userId: 'ext_1', agentId: 'agt_1' } }))
        .json.token
      expect(a).toBe(b)
      expect(twin.verifyToken(a).valid).toBe(true)
    } finally {
      await s.close()
    }
  })
})
