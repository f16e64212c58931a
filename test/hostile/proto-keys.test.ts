/**
 * A `__proto__` key is never dropped silently (issue 19). `JSON.parse` makes a key named
 * `__proto__` a plain own property, and the SDK returns and sends bodies as they are, so untyped
 * metadata keeps it. zod, however, leaves `__proto__` out of every object it outputs (it will not
 * assign it, which would set the prototype), so a `withMetadata` schema (a `z.looseObject`, a
 * `z.record`, a catch-all) used to lose it on read and on write: `updateMetadata` then erased a
 * stored one. Typed metadata now refuses it out loud: on write a RequestValidationError at its path
 * (nothing sent); on read a ResponseValidationError at `data.N.metadata…` (under
 * `responseValidation: 'warn'` that user is returned as sent, the key kept). Outside metadata a
 * typed read keeps it, as an untyped read does. Nothing pollutes a prototype on the way.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as z from 'zod'
import { ChatServiceClient, RequestValidationError, ResponseValidationError } from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET } from '../helpers/fixtures.ts'
import { recordingLogger, rejection, until, type RecordingLogger } from '../helpers/loopback.ts'
import { json, type HostileServer, useProcessGuard, useHostileServer } from './hostile-server.ts'

let server: HostileServer
let client: ChatServiceClient
let logger: RecordingLogger
// Around each test, after this file's own hooks: no uncaught error, unhandled rejection or pollution.
useProcessGuard()

/** A stored user's metadata as JSON text: `__proto__` written as a key (JSON.stringify of a literal would set the prototype instead). */
const STORED = '{"plan":"pro","__proto__":{"polluted":true},"deep":{"tags":["a"],"__proto__":{"polluted":true}}}'
const NESTED_ONLY = '{"plan":"pro","deep":{"__proto__":1}}'
const PLAIN = '{"plan":"free"}'

const userText = (i: number, metadata: string, extra = ''): string =>
  `{"id":"cu-${i}","external_id":"ext-${i}","name":"U","email":null,"metadata":${metadata},"active":true,"created_at":"2024-01-01T00:00:00Z","last_seen_at":null${extra}}`
const pageText = (users: string[], extra = ''): string =>
  `{"data":[${users.join(',')}],"pagination":{"page":1,"limit":20,"total":${users.length},"total_pages":1}${extra}}`
const updatedText = (metadata: string): string =>
  `{"id":"cu-1","external_id":"ext-1","name":"U","email":null,"metadata":${metadata},"active":true,"updated_at":"2024-01-02T00:00:00Z"}`

const Loose = z.looseObject({ plan: z.string() })
const schemas: [string, z.ZodType][] = [
  ['z.looseObject', Loose],
  ['z.record', z.record(z.string(), z.unknown())],
  ['z.object().catchall()', z.object({ plan: z.string() }).catchall(z.unknown())],
  ['z.looseObject with a typed nested object', z.looseObject({ plan: z.string(), deep: z.looseObject({}).optional() })],
]

/** The own keys of `value`, `__proto__` included. */
const own = (value: unknown): string[] => Object.keys(value as object)

useHostileServer((started) => {
  server = started
})
beforeEach(() => {
  logger = recordingLogger()
  client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0, logger })
})
afterEach(async () => {
  await client.close()
  await until(() => server.open === 0)
  expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
})

describe('untyped metadata keeps a __proto__ key as data', () => {
  it('read: the key is an own property; the prototype is untouched', async () => {
    server.respond(() => json(200, pageText([userText(1, STORED)])))
    const [user] = (await client.customerUsers.list()).data
    const metadata = user?.metadata as Record<string, unknown>
    expect(own(metadata)).toEqual(['plan', '__proto__', 'deep'])
    expect(Object.getPrototypeOf(metadata)).toBe(Object.prototype)
    expect(Object.getOwnPropertyDescriptor(metadata, '__proto__')?.value).toEqual(JSON.parse('{"polluted":true}'))
  })

  it('write: what was read is sent with it (a read-modify-write keeps it)', async () => {
    server.respond((request) => json(200, request.method === 'GET' ? pageText([userText(1, STORED)]) : updatedText(STORED)))
    const [user] = (await client.customerUsers.list()).data
    const updated = await client.customerUsers.update('cu-1', { metadata: { ...user?.metadata, seen: true } })
    const sent = JSON.parse(server.requests[1]?.text ?? '{}') as { metadata: Record<string, unknown> }
    expect(own(sent.metadata)).toEqual(['plan', '__proto__', 'deep', 'seen'])
    expect(own(updated.metadata)).toContain('__proto__')
  })
})

describe.each(schemas)('typed metadata (%s) refuses a __proto__ key out loud', (_name, schema) => {
  it('read: ResponseValidationError at data.N.metadata.__proto__, the body kept as sent', async () => {
    server.respond(() => json(200, pageText([userText(1, PLAIN), userText(2, STORED)])))
    const error = await rejection(client.customerUsers.withMetadata(schema).list())
    expect(error).toBeInstanceOf(ResponseValidationError)
    const { issues, body } = error as ResponseValidationError
    expect(issues.map((issue) => issue.path)).toEqual([
      ['data', 1, 'metadata', '__proto__'],
      ['data', 1, 'metadata', 'deep', '__proto__'],
    ])
    expect(issues[0]?.message).toContain('__proto__')
    const kept = (body as { data: { metadata: object }[] }).data[1]?.metadata
    expect(own(kept)).toContain('__proto__')
  })

  it('read: nested only, also refused', async () => {
    server.respond(() => json(200, pageText([userText(1, NESTED_ONLY)])))
    const error = await rejection(client.customerUsers.withMetadata(schema).list())
    expect((error as ResponseValidationError).issues.map((issue) => issue.path)).toEqual([['data', 0, 'metadata', 'deep', '__proto__']])
  })

  it('read: deeper, inside an array, also refused (any depth)', async () => {
    server.respond(() => json(200, pageText([userText(1, '{"plan":"pro","a":{"b":[{"c":{"__proto__":1}}]}}')])))
    const error = await rejection(client.customerUsers.withMetadata(schema).list())
    expect((error as ResponseValidationError).issues.map((issue) => issue.path)).toEqual([
      ['data', 0, 'metadata', 'a', 'b', 0, 'c', '__proto__'],
    ])
  })

  it.each([
    ["responseValidation 'warn'", { onInvalidMetadata: undefined }, { responseValidation: 'warn' as const }],
    ["onInvalidMetadata 'skip'", { onInvalidMetadata: 'skip' as const }, {}],
  ])(
    'read under %s: that user is left out and reported at metadata.__proto__ (never returned without its key), the others parsed',
    async (_how, metadataOptions, callOptions) => {
      server.respond(() => json(200, pageText([userText(1, PLAIN), userText(2, STORED)])))
      const page = await client.customerUsers.withMetadata(schema, metadataOptions).list({}, callOptions)
      expect(page.data.map((user) => user.metadata)).toEqual([{ plan: 'free' }])
      expect(page.skipped.map((skipped) => skipped.issues.map((issue) => issue.path))).toEqual([
        [
          ['metadata', '__proto__'],
          ['metadata', 'deep', '__proto__'],
        ],
      ])
      expect(logger.calls.some((call) => call.level === 'warn' && String(call.args[0]).includes('__proto__'))).toBe(true)
    },
  )

  it('the result of update: ResponseValidationError at metadata.__proto__', async () => {
    server.respond(() => json(200, updatedText(STORED)))
    const error = await rejection(client.customerUsers.withMetadata(schema).update('cu-1', { metadata: { plan: 'pro' } }))
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect((error as ResponseValidationError).issues[0]?.path).toEqual(['metadata', '__proto__'])
  })

  it('write: RequestValidationError at metadata.__proto__ (and deeper), nothing sent', async () => {
    const metadata = JSON.parse(STORED) as Record<string, unknown>
    const error = await rejection(client.customerUsers.withMetadata(schema).update('cu-1', { metadata }))
    expect(error).toBeInstanceOf(RequestValidationError)
    expect((error as RequestValidationError).issues.map((issue) => issue.path)).toEqual([
      ['metadata', '__proto__'],
      ['metadata', 'deep', '__proto__'],
    ])
    expect((error as RequestValidationError).message).toContain('__proto__')
    expect(server.requests).toEqual([])
  })

  it('updateMetadata: a stored __proto__ key stops it before the write (it is never erased)', async () => {
    server.respond(() => json(200, pageText([userText(1, STORED)])))
    const users = client.customerUsers.withMetadata(schema)
    const error = await rejection(users.updateMetadata('ext-1', (metadata) => metadata as never))
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect(server.requests.map((request) => request.method)).toEqual(['GET'])
  })
})

describe('typed reads keep a __proto__ key outside metadata, as untyped reads do', () => {
  it('on a user and on the page', async () => {
    server.respond(() => json(200, pageText([userText(1, PLAIN, ',"__proto__":{"polluted":true}')], ',"__proto__":{"polluted":true}')))
    const page = await client.customerUsers.withMetadata(Loose).list()
    const user = page.data[0] as object
    expect(own(user)).toContain('__proto__')
    expect(Object.getPrototypeOf(user)).toBe(Object.prototype)
    expect(Object.getOwnPropertyDescriptor(user, '__proto__')?.value).toEqual(JSON.parse('{"polluted":true}'))
  })

  it('on the result of update', async () => {
    server.respond(() => json(200, `${updatedText(PLAIN).slice(0, -1)},"__proto__":7}`))
    const updated = await client.customerUsers.withMetadata(Loose).update('cu-1', { metadata: { plan: 'pro' } })
    expect(Object.getOwnPropertyDescriptor(updated, '__proto__')?.value).toBe(7)
    expect(updated.metadata).toEqual({ plan: 'free' })
  })
})
