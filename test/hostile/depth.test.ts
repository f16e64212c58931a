/**
 * Everything the SDK throws is a ChatServiceError (issue 19), also for JSON nested thousands of
 * levels deep. `JSON.parse` reads any depth, but everything that walks the result recursively (the
 * redactor, zod, a schema of yours, `JSON.stringify`) overflows the stack, and a bare
 * `RangeError: Maximum call stack size exceeded` loses the status, the request id and the body.
 * The SDK reads and sends at most 256 levels (MAX_JSON_DEPTH): a response deeper is a
 * ResponseValidationError (an error status stays its APIError) keeping status, request id and the
 * body cut at 256 levels; input deeper is a RequestValidationError, nothing sent.
 */
import { tracingChannel } from 'node:diagnostics_channel'
import { inspect } from 'node:util'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import * as z from 'zod'
import {
  ChatServiceClient,
  ChatServiceError,
  InternalServerError,
  RequestValidationError,
  ResponseValidationError,
  TRACING_CHANNEL,
  type RequestTrace,
} from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, agent, customerUser, pagination, updatedUser } from '../helpers/fixtures.ts'
import { recordingLogger, rejection, until } from '../helpers/loopback.ts'
import { json, response, startHostileServer, type HostileServer, useProcessGuard } from './hostile-server.ts'

/** The deepest metadata you can send, and (4 levels more, for the envelope) the deepest response read. */
const MAX_DEPTH = 256
const MAX_RESPONSE_DEPTH = MAX_DEPTH + 4
/** Deep enough to overflow every recursive walker (JSON.stringify fails at a few thousand levels). */
const HOSTILE_DEPTH = 50_000
const TOO_DEEP = `[nested more than ${MAX_RESPONSE_DEPTH} levels deep: not shown]`

let server: HostileServer
let client: ChatServiceClient
// Around each test, after this file's own hooks: no uncaught error, unhandled rejection or pollution.
useProcessGuard()
const failures: unknown[] = []
const subscribers = {
  start: () => undefined,
  end: () => undefined,
  asyncStart: () => undefined,
  asyncEnd: () => undefined,
  error: (context: RequestTrace) => failures.push(context.error),
}
const channel = tracingChannel<unknown, RequestTrace>(TRACING_CHANNEL)

beforeAll(async () => {
  server = await startHostileServer()
  channel.subscribe(subscribers)
})
afterAll(async () => {
  channel.unsubscribe(subscribers)
  await server.close()
})
beforeEach(() => {
  server.clear()
  failures.length = 0
  client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0 })
})
afterEach(async () => {
  await client.close()
  await until(() => server.open === 0)
  // What the tracing channel saw failing is what the caller saw: typed errors only.
  for (const failure of failures) expect(failure).toBeInstanceOf(ChatServiceError)
})

/** JSON text of `levels` nested arrays (`[[[…]]]`), built as text: nothing recursive makes it. */
function nestedArrays(levels: number, inner = '"leaf"'): string {
  return `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`
}

/** JSON text of `levels` nested objects `{"a":{"a":…}}`. */
function nestedObjects(levels: number, inner = '"leaf"'): string {
  return `${'{"a":'.repeat(levels)}${inner}${'}'.repeat(levels)}`
}

/** A value of `levels` nested objects, built with a loop. */
function nestedValue(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true }
  for (let i = 1; i < levels; i++) value = { a: value }
  return value
}

/** How deep a value nests (iteratively: the value may be deep). */
function depthOf(value: unknown): number {
  let deepest = 0
  const stack: [unknown, number][] = [[value, 0]]
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number]
    if (current === null || typeof current !== 'object') continue
    deepest = Math.max(deepest, depth + 1)
    for (const item of Object.values(current)) stack.push([item, depth + 1])
  }
  return deepest
}

/** Every rendering of `error` works (none throws) and the error keeps what it must. */
function expectUsable(error: unknown): void {
  expect(error).toBeInstanceOf(ChatServiceError)
  expect(error).not.toBeInstanceOf(RangeError)
  expect(() => String(error)).not.toThrow()
  expect(() => inspect(error, { depth: Infinity })).not.toThrow()
  expect(() => JSON.stringify(error)).not.toThrow()
  expect(depthOf((error as { body?: unknown }).body)).toBeLessThanOrEqual(MAX_RESPONSE_DEPTH)
}

const listBody = (extra: string): string =>
  `{"data":[${JSON.stringify(agent(1))}],"pagination":${JSON.stringify(pagination(1, 20, 1))},"extra":${extra}}`

describe('a response nested too deep', () => {
  it.each([
    ['arrays', nestedArrays],
    ['objects', nestedObjects],
  ])(
    'a 200 with %s nested 50,000 levels: ResponseValidationError with status, request id and the body cut at 260 levels',
    async (_kind, nest) => {
      server.respond(() => response(200, { 'content-type': 'application/json', 'x-request-id': 'req-deep' }, listBody(nest(HOSTILE_DEPTH))))
      const error = await rejection(client.agents.list())
      expect(error).toBeInstanceOf(ResponseValidationError)
      const rve = error as ResponseValidationError
      expect(rve.status).toBe(200)
      expect(rve.requestId).toBe('req-deep')
      expect(rve.issues).toHaveLength(1)
      expect(rve.issues[0]?.code).toBe('too_big')
      expect(rve.issues[0]?.path).toHaveLength(8)
      expect(rve.issues[0]?.path[0]).toBe('extra')
      expect(rve.message).toContain(`Nested more than ${MAX_RESPONSE_DEPTH} levels deep below this point`)
      expect(rve.message).toContain('request id req-deep')
      expect(JSON.stringify(rve.body)).toContain(TOO_DEEP)
      expect((rve.body as { data: unknown }).data).toEqual([agent(1)])
      expectUsable(error)
    },
  )

  it('a 500 with a body nested 20,000 levels (under the 64 KiB error-body cap): still the InternalServerError, status and request id kept, body cut at 260 levels', async () => {
    server.respond(() => response(500, { 'content-type': 'application/json', 'x-request-id': 'req-500' }, nestedArrays(20_000)))
    const error = await rejection(client.agents.list())
    expect(error).toBeInstanceOf(InternalServerError)
    const apiError = error as InternalServerError
    expect(apiError.status).toBe(500)
    expect(apiError.requestId).toBe('req-500')
    expect(JSON.stringify(apiError.body)).toContain(TOO_DEEP)
    expect(apiError.message).toMatch(/^500 Internal Server Error: GET \/rest\/v1\/agents\?page=1 \(request id req-500\): \[\[\[/)
    expectUsable(error)
  })

  it('a body of 260 levels is read as sent; 261 are refused', async () => {
    // The extra member is the body's level 2: 259 nested arrays there make 260 levels.
    server.respond(() => json(200, listBody(nestedArrays(MAX_RESPONSE_DEPTH - 1))))
    const { response: meta } = await client.agents.list().withResponse()
    expect(meta.status).toBe(200)
    server.respond(() => json(200, listBody(nestedArrays(MAX_RESPONSE_DEPTH))))
    expect(await rejection(client.agents.list())).toBeInstanceOf(ResponseValidationError)
  })

  it('the shortest body nested too deep (261 bare arrays, 522 bytes) is refused for its depth, not its shape', async () => {
    // The depth walk is skipped for bodies too short to nest that deep (2 bytes a level): this one
    // is exactly long enough, so it must still be walked and refused as too deep.
    const shortest = nestedArrays(MAX_RESPONSE_DEPTH + 1, '')
    expect(shortest).toHaveLength(2 * (MAX_RESPONSE_DEPTH + 1))
    server.respond(() => json(200, shortest))
    const error = await rejection(client.agents.list())
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect((error as ResponseValidationError).issues.map((issue) => issue.code)).toEqual(['too_big'])
    // One level less is not too deep: refused for its shape (an array where a page belongs).
    server.respond(() => json(200, nestedArrays(MAX_RESPONSE_DEPTH, '')))
    const shallower = await rejection(client.agents.list())
    expect(shallower).toBeInstanceOf(ResponseValidationError)
    expect((shallower as ResponseValidationError).issues.map((issue) => issue.code)).not.toContain('too_big')
  })

  it("responseValidation 'warn' does not let a body nested too deep through", async () => {
    const logger = recordingLogger()
    const lenient = client.withOptions({ responseValidation: 'warn', logger })
    server.respond(() => json(200, listBody(nestedArrays(HOSTILE_DEPTH))))
    expectUsable(await rejection(lenient.agents.list()))
  })

  it('for await over pages: the deep page ends the loop with the typed error', async () => {
    server.respond((request) =>
      request.target.includes('page=2')
        ? json(200, listBody(nestedArrays(HOSTILE_DEPTH)))
        : json(200, { data: [agent(1)], pagination: pagination(1, 1, 2) }),
    )
    const seen: unknown[] = []
    const error = await rejection(
      (async () => {
        for await (const item of client.agents.list({ limit: 1 })) seen.push(item)
      })(),
    )
    expect(seen).toHaveLength(1)
    expect(error).toBeInstanceOf(ResponseValidationError)
  })

  it('a token issuance answered with deep JSON around the token: typed error, the token not shown', async () => {
    const token = 'eyJhbGciOiJIUzI1NiJ9.ZGVlcC10b2tlbg.c2lnbmF0dXJl'
    server.respond(() =>
      json(200, `{"token":"${token}","user":${nestedObjects(HOSTILE_DEPTH)},"agent":{"id":"a","name":"n","active":true}}`),
    )
    const error = await rejection(client.auth.issueToken({ userId: 'ext-1' }))
    expect(error).toBeInstanceOf(ResponseValidationError)
    expectUsable(error)
    expect(JSON.stringify(error)).not.toContain(token)
  })

  it('typed metadata with a recursive schema of yours: the deep user is a ResponseValidationError, not a RangeError', async () => {
    type Tree = { [key: string]: Tree | string }
    const Tree: z.ZodType<Tree> = z.lazy(() => z.record(z.string(), z.union([z.string(), Tree])))
    const deepUser = `{"data":[${JSON.stringify({ ...customerUser(1), metadata: '__M__' }).replace('"__M__"', nestedObjects(HOSTILE_DEPTH))}],"pagination":${JSON.stringify(pagination(1, 20, 1))}}`
    server.respond(() => json(200, deepUser))
    const error = await rejection(client.customerUsers.withMetadata(Tree).list())
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect((error as ResponseValidationError).issues[0]?.path.slice(0, 3)).toEqual(['data', 0, 'metadata'])
    expectUsable(error)
  })

  it('__proto__ keys in a deep body pollute nothing (checked after each test)', async () => {
    server.respond(() =>
      json(
        200,
        listBody(`{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"x":${nestedObjects(HOSTILE_DEPTH)}}`),
      ),
    )
    expectUsable(await rejection(client.agents.list()))
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined()
  })
})

describe('input nested too deep', () => {
  it('update with metadata nested 50,000 levels: RequestValidationError with a clear message, nothing sent', async () => {
    const error = await rejection(client.customerUsers.update('cu-1', { metadata: nestedValue(HOSTILE_DEPTH) }))
    expect(error).toBeInstanceOf(RequestValidationError)
    const issues = (error as RequestValidationError).issues
    expect(issues).toHaveLength(1)
    // The first 8 keys inside the metadata: below them it is too deep.
    expect(issues[0]?.path).toEqual(['metadata', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a'])
    expect((error as RequestValidationError).message).toContain(`Nested more than ${MAX_DEPTH} levels deep below this point`)
    expect(server.requests).toEqual([])
  })

  it('metadata of 256 levels is sent as given and read back; 257 is refused', async () => {
    server.respond((request) =>
      json(200, { ...updatedUser('cu-1'), metadata: (JSON.parse(request.text) as { metadata: unknown }).metadata }),
    )
    const updated = await client.customerUsers.update('cu-1', { metadata: nestedValue(MAX_DEPTH) })
    expect(depthOf(updated.metadata)).toBe(MAX_DEPTH)
    expect(depthOf((JSON.parse(server.requests[0]?.text ?? '') as { metadata: unknown }).metadata)).toBe(MAX_DEPTH)
    expect(await rejection(client.customerUsers.update('cu-1', { metadata: nestedValue(MAX_DEPTH + 1) }))).toBeInstanceOf(
      RequestValidationError,
    )
    expect(server.requests).toHaveLength(1)
  })

  it('withMetadata(recursive schema, forbiddenKeys): deep metadata is refused before your schema or the key check walks it', async () => {
    type Tree = { [key: string]: Tree | boolean }
    const Tree: z.ZodType<Tree> = z.lazy(() => z.record(z.string(), z.union([z.boolean(), Tree])))
    const users = client.customerUsers.withMetadata(Tree, { forbiddenKeys: ['password'] })
    const error = await rejection(users.update('cu-1', { metadata: nestedValue(HOSTILE_DEPTH) }))
    expect(error).toBeInstanceOf(RequestValidationError)
    expect((error as RequestValidationError).issues).toHaveLength(1)
    expect(server.requests).toEqual([])
  })

  it('withMetadata(recursive schema): metadata that contains itself is refused, not walked forever', async () => {
    type Tree = { [key: string]: Tree | boolean }
    const Tree: z.ZodType<Tree> = z.lazy(() => z.record(z.string(), z.union([z.boolean(), Tree])))
    const cyclic: Record<string, unknown> = { ok: true }
    cyclic['self'] = { again: cyclic }
    const error = await rejection(client.customerUsers.withMetadata(Tree).update('cu-1', { metadata: cyclic }))
    expect(error).toBeInstanceOf(RequestValidationError)
    expect((error as RequestValidationError).issues[0]).toMatchObject({
      path: ['metadata', 'self', 'again'],
      message: 'Circular reference: JSON cannot represent it',
    })
    expect(server.requests).toEqual([])
  })
})
