// Property tests (fast-check) at the public API, with undici's MockAgent as the dispatcher:
// - any valid resource round-trips through its schema unchanged, unknown fields included;
// - any invalid params are refused before the network;
// - any byte string as a response body ends in a valid result or a ChatServiceError subclass.
import fc from 'fast-check'
import { MockAgent, type Dispatcher } from 'undici'
import { describe, expect, it } from 'vitest'
import { ChatServiceClient, ChatServiceError, RequestValidationError } from 'chat-service-sdk'

const ORIGIN = 'https://chat.example.com'
/** Runs `body` with a client whose dispatcher is a fresh MockAgent, closing it afterwards. */
async function withMock(body: (client: ChatServiceClient, mock: MockAgent) => Promise<void>): Promise<void> {
  const mock = new MockAgent()
  mock.disableNetConnect()
  const client = new ChatServiceClient({
    baseUrl: ORIGIN,
    keyId: 'key',
    keySecret: 'secret',
    dispatcher: mock,
    maxRetries: 0,
    logLevel: 'off',
  })
  try {
    await body(client, mock)
  } finally {
    await mock.close()
  }
}

const iso = fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString())
const json = fc.jsonValue().filter((v) => !Object.is(v, -0))
const extra = fc.dictionary(
  fc.string({ minLength: 1 }).map((k) => `x_${k}`),
  json,
  { maxKeys: 3 },
)
const customerUser = fc
  .record({
    id: fc.string(),
    external_id: fc.string(),
    name: fc.option(fc.string(), { nil: null }),
    email: fc.option(fc.string(), { nil: null }),
    metadata: fc.option(fc.dictionary(fc.string(), json, { maxKeys: 4 }), { nil: null }),
    active: fc.boolean(),
    created_at: iso,
    last_seen_at: fc.option(iso, { nil: null }),
  })
  .chain((user) => extra.map((more) => ({ ...more, ...user })))
const pagination = fc
  .record({ limit: fc.integer({ min: 1, max: 100 }), total: fc.nat({ max: 10_000 }) })
  .map(({ limit, total }) => ({ page: 1, limit, total, total_pages: Math.ceil(total / limit) }))

function replyOnce(mock: MockAgent, status: number, body: string | Buffer, headers: Record<string, string> = {}): void {
  mock
    .get(ORIGIN)
    .intercept({ path: () => true, method: () => true })
    .reply(status, body, { headers })
}

describe('properties', () => {
  it('any valid page of customer users comes back exactly as sent, unknown fields kept', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(customerUser, { maxLength: 5 }), pagination, (data, pagination) =>
        withMock(async (client, mock) => {
          const body = { data, pagination, x_new_top_level: true }
          replyOnce(mock, 200, JSON.stringify(body), { 'content-type': 'application/json' })
          const page = await client.customerUsers.list()
          expect(page.data).toEqual(JSON.parse(JSON.stringify(data)))
          expect(page.pagination).toEqual(pagination)
        }),
      ),
      { numRuns: 60 },
    )
  })

  it('any invalid page/limit is refused with RequestValidationError and nothing is dispatched', async () => {
    const notAPage = fc.oneof(
      fc.integer({ max: 0 }),
      fc.double({ noNaN: false }).filter((n) => !Number.isInteger(n) || n < 1),
      fc.string(),
      fc.constant(null),
      fc.boolean(),
    )
    const notALimit = fc.oneof(notAPage, fc.integer({ min: 101 }))
    await fc.assert(
      fc.asyncProperty(
        fc.record({ page: notAPage, limit: notALimit }, { requiredKeys: [] }).filter((p) => Object.keys(p).length > 0),
        async (params) => {
          let dispatched = 0
          const counting = {
            dispatch: () => {
              dispatched++
              return true
            },
            close: async () => {},
            destroy: async () => {},
          } as unknown as Dispatcher
          const client = new ChatServiceClient({ baseUrl: ORIGIN, keyId: 'key', keySecret: 'secret', dispatcher: counting })
          const error = await client.agents.list(params as never).then(
            () => undefined,
            (e: unknown) => e,
          )
          expect(error).toBeInstanceOf(RequestValidationError)
          expect((error as RequestValidationError).issues.length).toBeGreaterThanOrEqual(Object.keys(params).length)
          expect(dispatched).toBe(0)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('any byte string as a response body ends in a valid result or a ChatServiceError subclass', async () => {
    const statuses = fc.constantFrom(200, 200, 200, 201, 204, 301, 400, 401, 404, 429, 500, 503)
    const bodies = fc.oneof(
      fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes)),
      fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value))),
      fc
        .record({ data: fc.array(fc.jsonValue(), { maxLength: 3 }), pagination: fc.jsonValue() })
        .map((v) => Buffer.from(JSON.stringify(v))),
    )
    await fc.assert(
      fc.asyncProperty(statuses, bodies, fc.constantFrom('agents', 'messages', 'token', 'update'), (status, body, endpoint) =>
        withMock(async (client, mock) => {
          replyOnce(mock, status, body)
          const call =
            endpoint === 'agents'
              ? client.agents.list().then((page) => page.data)
              : endpoint === 'messages'
                ? client.conversations.messages.list('c1').then((page) => page.conversation)
                : endpoint === 'token'
                  ? client.auth.issueToken({ userId: 'u1' })
                  : client.customerUsers.update('u1', { name: 'n' })
          const outcome = await call.then(
            (value) => ({ ok: true as const, value }),
            (error: unknown) => ({ ok: false as const, error }),
          )
          if (!outcome.ok) expect(outcome.error).toBeInstanceOf(ChatServiceError)
        }),
      ),
      { numRuns: 300 },
    )
  })
})
