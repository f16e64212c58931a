/**
 * `customerUsers.findByExternalId(externalId)` (API.md, "Added in 0.3"; issue 18) at the wire. The
 * spec leaves open whether the `external_id` filter matches exactly or partially, so the SDK
 * matches exactly itself, over every page of the filter at 100 a page. A loopback server plays a
 * service whose filter matches PARTIALLY (substring), honouring `page` and `limit` and reading the
 * filter from the GET body, as the spec puts it; the fake (exact matching) checks the plain case.
 */
import { inspect } from 'node:util'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import * as z from 'zod'
import {
  ChatServiceClient,
  ChatServiceError,
  DuplicateExternalIdError,
  RequestValidationError,
  ResponseValidationError,
} from 'chat-service-sdk'
import { createFakeChatService, type CustomerUserSeed, type FakeServerHandle } from 'chat-service-sdk/testing'
import { KEY_ID, KEY_SECRET, customerUser, listBody } from '../helpers/fixtures.ts'
import { rejection, targetOf, type Arrival, type LoopbackServer, useLoopback } from '../helpers/loopback.ts'

/** A stored user of the partial-matching service. */
function user(i: number, externalId: string, metadata: unknown = { plan: 'pro' }): Record<string, unknown> {
  return { ...customerUser(i), external_id: externalId, metadata }
}

/**
 * A service whose `external_id` filter is a substring match: `ext-1` also returns `ext-10`,
 * `ext-11`, ... It pages as the spec says and tags every response with `x-request-id: page-N`.
 */
function partialMatching(users: Record<string, unknown>[]) {
  return (request: Arrival) => {
    const { query } = targetOf(request)
    const page = Number(query.get('page') ?? '1')
    const limit = Number(query.get('limit') ?? '20')
    const filter = (JSON.parse(request.body) as { external_id?: string }).external_id ?? ''
    const matched = users.filter((candidate) => String(candidate['external_id']).includes(filter))
    return {
      headers: { 'x-request-id': `page-${page}` },
      body: listBody(matched.slice((page - 1) * limit, page * limit), page, limit, matched.length),
    }
  }
}

/** `count` users whose external ids contain `ext-1` but are not `ext-1`: ext-1000, ext-1001, ... */
const nearMatches = (count: number, from = 0): Record<string, unknown>[] =>
  Array.from({ length: count }, (_, i) => user(from + i + 100, `ext-${1000 + from + i}`))

let server: LoopbackServer
let client: ChatServiceClient

useLoopback((started) => {
  server = started
})
beforeEach(() => {
  client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0 })
})
afterEach(async () => {
  await client.close()
})

describe('against a service whose filter matches partially', () => {
  it('finds the exact match on a later page among near matches, reading every page at limit 100', async () => {
    // 150 near matches, then the user asked for: it is on page 2 of 2.
    server.respond(partialMatching([...nearMatches(150), user(1, 'ext-1'), user(2, 'ext-2')]))
    const found = await client.customerUsers.findByExternalId('ext-1')
    expect(found).toMatchObject({ id: 'cu-1', external_id: 'ext-1' })
    expect(server.arrivals.map((arrival) => arrival.target)).toStrictEqual([
      '/rest/v1/customer-users?limit=100&page=1',
      '/rest/v1/customer-users?limit=100&page=2',
    ])
    for (const arrival of server.arrivals) {
      expect(arrival.method).toBe('GET')
      expect(JSON.parse(arrival.body)).toStrictEqual({ keyId: KEY_ID, keySecret: KEY_SECRET, external_id: 'ext-1' })
    }
  })

  it('null when only near matches come back (every page read), and when nothing does', async () => {
    server.respond(partialMatching(nearMatches(120)))
    expect(await client.customerUsers.findByExternalId('ext-1')).toBeNull()
    expect(server.arrivals).toHaveLength(2)
    server.clear()
    expect(await client.customerUsers.findByExternalId('nobody')).toBeNull()
    expect(server.arrivals).toHaveLength(1)
  })

  it('compares exactly: neither case nor surrounding whitespace is ignored', async () => {
    server.respond(() => ({ body: listBody([user(1, 'EXT-1'), user(2, ' ext-1'), user(3, 'ext-1 ')]) }))
    expect(await client.customerUsers.findByExternalId('ext-1')).toBeNull()
  })

  it('three users with this external id, on different pages: DuplicateExternalIdError with every id, no secret', async () => {
    server.respond(partialMatching([user(1, 'ext-1'), ...nearMatches(120), user(2, 'ext-1'), user(3, 'ext-1')]))
    const error = await rejection(client.customerUsers.findByExternalId('ext-1'))
    expect(error).toBeInstanceOf(DuplicateExternalIdError)
    expect(error).toBeInstanceOf(ChatServiceError)
    expect(error).not.toBeInstanceOf(RequestValidationError)
    const duplicate = error as DuplicateExternalIdError
    expect(duplicate.name).toBe('DuplicateExternalIdError')
    expect(duplicate.externalId).toBe('ext-1')
    expect(duplicate.ids).toStrictEqual(['cu-1', 'cu-2', 'cu-3'])
    expect(duplicate.retryable).toBe(false)
    expect(duplicate.message).toContain('3 customer users have the external_id "ext-1" (ids cu-1, cu-2, cu-3)')
    expect(duplicate.message).toContain('not unique')
    // Every page was read, to collect them.
    expect(server.arrivals).toHaveLength(2)
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({
      name: 'DuplicateExternalIdError',
      externalId: 'ext-1',
      ids: ['cu-1', 'cu-2', 'cu-3'],
    })
    for (const view of [duplicate.message, String(error), inspect(error), JSON.stringify(error)]) expect(view).not.toContain(KEY_SECRET)
  })

  it('one user a page shift shows on two pages is one user, not a duplicate', async () => {
    // Page 2 begins with the last user of page 1 again (a user was added before it in between).
    const users = [...nearMatches(99), user(1, 'ext-1'), ...nearMatches(30, 99)]
    server.respond((request) => {
      const page = Number(targetOf(request).query.get('page'))
      const rows = page === 1 ? users.slice(0, 100) : users.slice(99)
      return { body: listBody(rows, page, 100, 131) }
    })
    expect(await client.customerUsers.findByExternalId('ext-1')).toMatchObject({ id: 'cu-1' })
    expect(server.arrivals).toHaveLength(2)
  })

  it('ids the service sent with a secret in them, and an external id holding one, are scrubbed like every error', async () => {
    const secretId = `cu-${KEY_SECRET}`
    server.respond(() => ({ body: listBody([{ ...user(1, 'ext-1'), id: secretId }, user(2, 'ext-1')]) }))
    const error = (await rejection(client.customerUsers.findByExternalId('ext-1'))) as DuplicateExternalIdError
    expect(error).toBeInstanceOf(DuplicateExternalIdError)
    expect(error.ids).toHaveLength(2)
    expect(error.ids[0]).toContain('[REDACTED]')
    expect(error.ids[1]).toBe('cu-2')
    for (const view of [error.message, String(error), inspect(error), JSON.stringify(error)]) expect(view).not.toContain(KEY_SECRET)

    server.respond(() => ({ body: listBody([user(1, KEY_SECRET), user(2, KEY_SECRET)]) }))
    const second = (await rejection(client.customerUsers.findByExternalId(KEY_SECRET))) as DuplicateExternalIdError
    expect(second.externalId).toBe('[REDACTED]')
    for (const view of [second.message, inspect(second), JSON.stringify(second)]) expect(view).not.toContain(KEY_SECRET)
  })

  it('collects at most 1,000 ids: with more, it stops reading there and says "at least"', async () => {
    const many = Array.from({ length: 1_250 }, (_, i) => user(i + 1, 'ext-1'))
    server.respond(partialMatching(many))
    const error = (await rejection(client.customerUsers.findByExternalId('ext-1'))) as DuplicateExternalIdError
    expect(error).toBeInstanceOf(DuplicateExternalIdError)
    expect(error.ids).toHaveLength(1_000)
    expect(error.ids[999]).toBe('cu-1000')
    expect(error.message).toMatch(/^At least 1000 customer users have the external_id "ext-1" \(ids cu-1, .*, cu-10 and 990 more\)/)
    expect(server.arrivals).toHaveLength(10) // not 13
  })

  it('a DuplicateExternalIdError you make yourself', () => {
    const error = new DuplicateExternalIdError({ externalId: 'crm-1', ids: ['a', 'b'] })
    expect(error.message).toContain('2 customer users have the external_id "crm-1" (ids a, b)')
    expect(Object.isFrozen(error.ids)).toBe(true)
    expect(error.retryable).toBe(false)
  })

  it('.withResponse() gives the response of the last page read', async () => {
    server.respond(partialMatching([user(1, 'ext-1'), ...nearMatches(230)]))
    const { data, response } = await client.customerUsers.findByExternalId('ext-1').withResponse()
    expect(data).toMatchObject({ id: 'cu-1' })
    expect(server.arrivals).toHaveLength(3)
    expect(response.status).toBe(200)
    expect(response.requestId).toBe('page-3')
    expect(response.headers['x-request-id']).toBe('page-3')
  })

  it('typed by withMetadata: the match comes back as the schema output', async () => {
    const Metadata = z.object({ version: z.literal(1), tier: z.string() }).transform(({ tier }) => ({ version: 2 as const, plan: tier }))
    server.respond(partialMatching([user(10, 'ext-10', { version: 1, tier: 'x' }), user(1, 'ext-1', { version: 1, tier: 'gold' })]))
    const found = await client.customerUsers.withMetadata(Metadata).findByExternalId('ext-1')
    expect(found?.metadata).toStrictEqual({ version: 2, plan: 'gold' })
    expect(found?.id).toBe('cu-1')
  })

  it('a page that fails its checks rejects with ResponseValidationError', async () => {
    server.respond(() => ({ body: { data: [user(1, 'ext-1')] } }))
    await expect(client.customerUsers.findByExternalId('ext-1')).rejects.toBeInstanceOf(ResponseValidationError)
  })

  it.each([
    ['an empty external id', () => client.customerUsers.findByExternalId(''), ['externalId']],
    ['a non-string external id', () => client.customerUsers.findByExternalId(42 as never), ['externalId']],
    ['an unknown option', () => client.customerUsers.findByExternalId('ext-1', { prefetch: 2 } as never), ['options']],
  ])('%s is a RequestValidationError and nothing is sent', async (_name, call, path) => {
    const error = await rejection(call())
    expect(error).toBeInstanceOf(RequestValidationError)
    expect((error as RequestValidationError).message).toContain('customerUsers.findByExternalId')
    expect((error as RequestValidationError).issues[0]?.path).toStrictEqual(path)
    expect(server.arrivals).toHaveLength(0)
  })

  it('updateMetadata shares the lookup: duplicates are refused the same way, nothing written', async () => {
    server.respond(partialMatching([user(1, 'ext-1'), user(2, 'ext-1')]))
    const error = await rejection(client.customerUsers.updateMetadata('ext-1', (metadata) => ({ ...metadata, touched: true })))
    expect(error).toBeInstanceOf(DuplicateExternalIdError)
    expect((error as DuplicateExternalIdError).ids).toStrictEqual(['cu-1', 'cu-2'])
    expect(server.arrivals.map((arrival) => arrival.method)).toStrictEqual(['GET'])
  })
})

describe('against the fake (exact matching)', () => {
  const fake = createFakeChatService({
    seed: {
      companies: [
        {
          id: 'co_find',
          keys: [{ keyId: 'key_find', keySecret: 'ks_find_Vt83nQ2xLm7R' }],
          customerUsers: [
            { ...user(1, 'crm-1'), id: 'cu_1', created_at: '2024-01-01T00:00:00Z' },
            { ...user(2, 'crm-2'), id: 'cu_2', created_at: '2024-01-02T00:00:00Z' },
          ] as CustomerUserSeed[],
        },
      ],
    },
  })
  let listening: FakeServerHandle
  let fakeClient: ChatServiceClient
  beforeAll(async () => {
    listening = await fake.listen()
    fakeClient = new ChatServiceClient({ baseUrl: listening.url, keyId: 'key_find', keySecret: 'ks_find_Vt83nQ2xLm7R' })
  })
  afterAll(async () => {
    await fakeClient.close()
    await listening.close()
  })

  it('one request for one user; null for an unknown id; an APIPromise that is awaited like any promise', async () => {
    fake.clearRequests()
    const promise = fakeClient.customerUsers.findByExternalId('crm-2')
    expect(await promise).toMatchObject({ id: 'cu_2', external_id: 'crm-2' })
    expect(await fakeClient.customerUsers.findByExternalId('crm-404')).toBeNull()
    const key = { keyId: 'key_find', keySecret: 'ks_find_Vt83nQ2xLm7R' }
    expect(fake.requests.map((request) => [request.method, request.rawPath, request.body])).toStrictEqual([
      ['GET', '/rest/v1/customer-users?limit=100&page=1', { ...key, external_id: 'crm-2' }],
      ['GET', '/rest/v1/customer-users?limit=100&page=1', { ...key, external_id: 'crm-404' }],
    ])
  })

  it("TESTING.md's recipe for a duplicate (the fake keeps external_id unique): a scripted 200 gives DuplicateExternalIdError", async () => {
    const [userA, userB] = fake.listCustomerUsers('co_find').map((stored) => ({ ...stored, external_id: 'crm-dup' }))
    fake.failNext(1, {
      status: 200,
      body: { data: [userA, userB], pagination: { page: 1, limit: 100, total: 2, total_pages: 1 } },
      match: { method: 'GET', path: '/rest/v1/customer-users' },
    })
    const error = await rejection(fakeClient.customerUsers.findByExternalId('crm-dup'))
    expect(error).toBeInstanceOf(DuplicateExternalIdError)
    expect((error as DuplicateExternalIdError).ids).toEqual(['cu_1', 'cu_2'])
  })
})
