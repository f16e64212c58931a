/**
 * Customer users at company scale (issue 18), at the public API against the fake (listen mode)
 * and, for what the fake cannot play, a loopback server:
 * - `update(id, changes)` with changes built at run time: what is given is sent, an empty update
 *   (`{}`, or every member undefined) is a RequestValidationError and nothing is sent;
 * - a stored user whose metadata the `withMetadata` schema rejects, among good ones, under each
 *   `onInvalidMetadata` policy and under `responseValidation: 'warn'`;
 * - `findByExternalId` / `updateMetadata` on such a user;
 * - issues of a union that no branch matched name each branch and why it failed.
 * The types of the computed update are in typed-metadata-types.test.ts.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import * as z from 'zod'
import { ChatServiceClient, RequestValidationError, ResponseValidationError, type CustomerUserPage, type resources } from 'chat-service-sdk'
import { createFakeChatService, type CustomerUserSeed, type FakeServerHandle } from 'chat-service-sdk/testing'
import { KEY_ID, KEY_SECRET, customerUser, listBody } from '../helpers/fixtures.ts'
import { recordingLogger, rejection, startLoopback, targetOf, type LoopbackServer, type RecordingLogger } from '../helpers/loopback.ts'

// docs/typed-metadata.md's versioned metadata: version 1 had a flat plan, version 2 a subscription.
const Plan = z.enum(['free', 'starter', 'pro', 'enterprise'])
const V1 = z.looseObject({ version: z.literal(1), plan: Plan })
const V2 = z.looseObject({ version: z.literal(2), subscription: z.object({ plan: Plan, seats: z.number().int().min(1) }) })
const Metadata = z.union([V2, V1.transform(({ plan, ...rest }) => ({ ...rest, version: 2 as const, subscription: { plan, seats: 1 } }))])

const COMPANY = 'co_scale'
const KEY = { keyId: 'key_scale', keySecret: 'ks_scale_Vb72nQ4mXe9P' }
/** Users in the fake; the one at BAD (0-based) holds metadata neither version accepts. */
const USERS = 60
const BAD = 50

function seedUser(i: number): CustomerUserSeed {
  const metadata =
    i === BAD
      ? { version: 1, plan: 'gold' }
      : i % 2 === 0
        ? { version: 1, plan: 'pro' }
        : { version: 2, subscription: { plan: 'free', seats: 2 } }
  return {
    id: `cu_${String(i).padStart(3, '0')}`,
    external_id: `ext-${String(i).padStart(3, '0')}`,
    name: `User ${i}`,
    email: `user${i}@example.com`,
    metadata,
    active: true,
    created_at: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(), // listed in seed order
    last_seen_at: '2024-02-01T00:00:00Z',
  }
}
const badId = seedUser(BAD).id
const badExternalId = seedUser(BAD).external_id

const fake = createFakeChatService({
  seed: { companies: [{ id: COMPANY, keys: [KEY], customerUsers: Array.from({ length: USERS }, (_, i) => seedUser(i)) }] },
})
let server: FakeServerHandle
let client: ChatServiceClient
let logger: RecordingLogger

beforeAll(async () => {
  server = await fake.listen()
})
afterAll(async () => {
  await server.close()
})
beforeEach(() => {
  fake.reset()
  logger = recordingLogger()
  client = new ChatServiceClient({ baseUrl: server.url, ...KEY, maxRetries: 0, logger })
})
afterEach(async () => {
  await client.close()
})

const puts = (): number => fake.requests.filter((request) => request.method === 'PUT').length

describe('update(id, changes) with changes computed at run time', () => {
  it('sends what was given; {} and an all-undefined object are refused, nothing sent (plain and typed)', async () => {
    const changes: { name?: string; email?: string } = {}
    if (Math.random() >= 0) changes.name = 'Renamed'
    const updated = await client.customerUsers.update('cu_001', changes)
    expect(updated.name).toBe('Renamed')
    expect(fake.getCustomerUser(COMPANY, 'cu_001')?.email).toBe('user1@example.com')
    expect(puts()).toBe(1)

    const typed = client.customerUsers.withMetadata(Metadata)
    for (const empty of [{}, { name: undefined, email: undefined, metadata: undefined }]) {
      for (const call of [client.customerUsers.update('cu_001', empty), typed.update('cu_001', empty)]) {
        const error = await rejection(call)
        expect(error).toBeInstanceOf(RequestValidationError)
        expect((error as RequestValidationError).message).toContain('Nothing to update: give at least one of name, email or metadata')
        expect((error as RequestValidationError).message).toContain('Nothing was sent')
      }
    }
    expect(puts()).toBe(1)
  })
})

describe('a stored user whose metadata the schema rejects, among good ones', () => {
  it("'throw' (default): the page fails with ResponseValidationError naming data.50.metadata and both branches", async () => {
    const error = await rejection(client.customerUsers.withMetadata(Metadata).list({ limit: 100 }))
    expect(error).toBeInstanceOf(ResponseValidationError)
    const { issues, message } = error as ResponseValidationError
    expect(issues.map((issue) => issue.path)).toStrictEqual([['data', BAD, 'metadata']])
    expect(message).toContain('data.50.metadata: no branch matched: branch 1 (version 2): version: Invalid input: expected 2')
    expect(message).toContain('branch 2: plan: Invalid option')
    expect(logger.calls).toEqual([])
  })

  it("'skip': every good user listed, the odd one reported on its page, to onSkip and in one warn line", async () => {
    const reported: resources.SkippedCustomerUser[] = []
    const users = client.customerUsers.withMetadata(Metadata, { onInvalidMetadata: 'skip', onSkip: (skipped) => reported.push(skipped) })
    const ids: string[] = []
    const pages: CustomerUserPage<z.output<typeof Metadata>>[] = []
    for await (const page of users.list({ limit: 20 }).pages()) {
      pages.push(page)
      for (const user of page.data) {
        expect(user.metadata.version).toBe(2) // every item is the schema's output
        ids.push(user.id)
      }
    }
    expect(ids).toHaveLength(USERS - 1)
    expect(ids).not.toContain(badId)
    // Reported where it was: page 3 (users 40–59), index 10; totals as the service sent them.
    expect(pages.map((page) => page.skipped.length)).toStrictEqual([0, 0, 1])
    expect(pages[2]?.data).toHaveLength(19)
    expect(pages[2]?.pagination).toStrictEqual({ page: 3, limit: 20, total: USERS, total_pages: 3 })
    const [skipped] = pages[2]?.skipped ?? []
    expect(skipped).toMatchObject({ id: badId, external_id: badExternalId, index: 10 })
    expect(skipped?.issues.map((issue) => issue.path)).toStrictEqual([['metadata']])
    expect(skipped?.issues[0]?.branches?.[1]).toMatchObject([{ path: ['plan'], code: 'invalid_value' }])
    expect(reported).toStrictEqual([skipped])
    // Logged once, at warn, naming the user and the issues.
    const warnings = logger.messages('warn')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain(`left out data.10 (id ${badId})`)
    expect(warnings[0]).toContain("onInvalidMetadata: 'skip'")
    expect(warnings[0]).toContain('no branch matched')
  })

  it("'skip' with item iteration (for await of the list): the good users, in order", async () => {
    const users = client.customerUsers.withMetadata(Metadata, { onInvalidMetadata: 'skip' })
    const ids: string[] = []
    for await (const user of users.list({ limit: 100 })) ids.push(user.id)
    expect(ids).toStrictEqual(Array.from({ length: USERS }, (_, i) => seedUser(i).id).filter((id) => id !== badId))
    expect(logger.messages('warn')).toHaveLength(1)
  })

  it("responseValidation 'warn' (either policy): the odd user is skipped and reported, never returned as sent", async () => {
    for (const onInvalidMetadata of ['throw', 'skip'] as const) {
      logger.calls.length = 0
      const users = client.withOptions({ responseValidation: 'warn' }).customerUsers.withMetadata(Metadata, { onInvalidMetadata })
      const page = await users.list({ limit: 100 })
      expect(page.data).toHaveLength(USERS - 1)
      expect(new Set(page.data.map((user) => user.metadata.subscription.plan))).toStrictEqual(new Set(['pro', 'free']))
      expect(page.skipped).toMatchObject([{ id: badId, index: BAD }])
      expect(logger.messages('warn')).toHaveLength(1)
    }
  })

  it('an onSkip that throws ends the listing with its error', async () => {
    const stop = new Error('too many invalid users')
    const users = client.customerUsers.withMetadata(Metadata, {
      onInvalidMetadata: 'skip',
      onSkip: () => {
        throw stop
      },
    })
    expect(await rejection(users.list({ limit: 100 }))).toBe(stop)
  })

  it('findByExternalId on the odd user under skip: ResponseValidationError naming the user, not null', async () => {
    const users = client.customerUsers.withMetadata(Metadata, { onInvalidMetadata: 'skip' })
    const error = await rejection(users.findByExternalId(badExternalId))
    expect(error).toBeInstanceOf(ResponseValidationError)
    const { message, issues } = error as ResponseValidationError
    expect(message).toContain(`customer user ${badId} (external_id "${badExternalId}") exists, but its metadata does not match`)
    expect(issues.map((issue) => issue.path)).toStrictEqual([
      ['data', 0],
      ['data', 0, 'metadata'],
    ])
    // A good user is still found; updateMetadata on the odd one writes nothing.
    expect((await users.findByExternalId('ext-001'))?.id).toBe('cu_001')
    expect(await rejection(users.updateMetadata(badExternalId, (metadata) => metadata))).toBeInstanceOf(ResponseValidationError)
    expect(puts()).toBe(0)
  })

  it('withMetadata refuses an unknown policy or an onSkip that is not a function, at once', () => {
    expect(() => client.customerUsers.withMetadata(Metadata, { onInvalidMetadata: 'warn' as 'skip' })).toThrow(RequestValidationError)
    expect(() => client.customerUsers.withMetadata(Metadata, { onSkip: 'log' as unknown as () => void })).toThrow(
      /onSkip: Expected a function/,
    )
  })
})

describe('at a service the fake cannot play', () => {
  let loopback: LoopbackServer
  let wire: ChatServiceClient
  beforeAll(async () => {
    loopback = await startLoopback()
  })
  afterAll(async () => {
    await loopback.close()
  })
  beforeEach(() => {
    loopback.clear()
    wire = new ChatServiceClient({ baseUrl: loopback.origin, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0, logger })
  })
  afterEach(async () => {
    await wire.close()
  })

  it('a page before the last whose every user is skipped does not end the iteration (the paging rules see the page as sent)', async () => {
    const all = [1, 2, 3, 4].map((i) => ({ ...customerUser(i), metadata: i <= 2 ? { version: 9 } : { version: 1, plan: 'pro' } }))
    loopback.respond((request) => {
      const page = Number(targetOf(request).query.get('page') ?? '1')
      return { body: listBody(all.slice((page - 1) * 2, page * 2), page, 2, all.length) }
    })
    const users = wire.customerUsers.withMetadata(Metadata, { onInvalidMetadata: 'skip' })
    const seen: string[] = []
    for await (const user of users.list({ limit: 2 })) seen.push(user.id)
    expect(seen).toStrictEqual(['cu-3', 'cu-4'])
    expect(logger.messages('warn')).toHaveLength(2)
  })

  it('a page the paging rules refuse (the wrong page number): the error keeps the body as sent, skipped users included', async () => {
    const users = [1, 2].map((i) => ({ ...customerUser(i), metadata: i === 1 ? { version: 9 } : { version: 1, plan: 'pro' } }))
    loopback.respond(() => ({ body: listBody(users, 2, 2, 4) })) // asked for page 1
    const error = await rejection(wire.customerUsers.withMetadata(Metadata, { onInvalidMetadata: 'skip' }).list({ limit: 2 }))
    expect(error).toBeInstanceOf(ResponseValidationError)
    const body = (error as ResponseValidationError).body as { data: { id: string }[] }
    expect(body.data.map((user) => user.id)).toStrictEqual(['cu-1', 'cu-2'])
    expect(Object.getOwnPropertySymbols(body)).toStrictEqual([])
  })

  it('findByExternalId: a near match with invalid metadata is skipped, the exact one found', async () => {
    const near = { ...customerUser(10), external_id: 'ext-10', metadata: { version: 9 } }
    const exact = { ...customerUser(1), external_id: 'ext-1', metadata: { version: 1, plan: 'pro' } }
    loopback.respond(() => ({ body: listBody([near, exact]) }))
    const users = wire.customerUsers.withMetadata(Metadata, { onInvalidMetadata: 'skip' })
    expect((await users.findByExternalId('ext-1'))?.metadata).toStrictEqual({ version: 2, subscription: { plan: 'pro', seats: 1 } })
  })

  it('a union refused in an update names each branch (RequestValidationError), secrets scrubbed from branch messages', async () => {
    const Leaky = z.union([z.object({ token: z.number({ error: `not ${KEY_SECRET}` }) }), z.object({ version: z.literal(1), plan: Plan })])
    const error = await rejection(
      wire.customerUsers.withMetadata(Leaky).update('cu-1', { metadata: { token: 'x', version: 1, plan: 'gold' } as never }),
    )
    expect(error).toBeInstanceOf(RequestValidationError)
    const { message, issues } = error as RequestValidationError
    expect(message).toContain('metadata: no branch matched: branch 1: token: not [REDACTED]; branch 2: plan: Invalid option')
    expect(message).not.toContain(KEY_SECRET)
    expect(JSON.stringify(issues)).not.toContain(KEY_SECRET)
    expect(issues[0]?.branches?.[0]?.[0]?.path).toStrictEqual(['token'])
    expect(loopback.arrivals).toHaveLength(0)
  })
})
