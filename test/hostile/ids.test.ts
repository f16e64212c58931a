/**
 * Ids that stay ids (issue 19). `.` and `..` are dot segments: percent-encoding does not save them,
 * since WHATWG-URL parsers read `%2E` and `%2E%2E` as `.` and `..` (so `PUT
 * /rest/v1/customer-users/%2E%2E` reaches `PUT /rest/v1/`). They are refused before anything is
 * sent, at the id schema, so every path parameter (and every id argument) gets the rule. Every
 * other id, however odd, reaches a WHATWG-URL router as exactly one segment that decodes to it.
 *
 * The hostile server here resolves the request target as such a router does (`new URL`), and
 * answers as if the resolved path were the route: a 200 for `/rest/v1/` would be the leak.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import * as z from 'zod'
import { ChatServiceClient, RequestValidationError } from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, message, updatedUser } from '../helpers/fixtures.ts'
import { rejection, until } from '../helpers/loopback.ts'
import { json, startHostileServer, type HostileServer, useProcessGuard } from './hostile-server.ts'

let server: HostileServer
let client: ChatServiceClient
// Around each test, after this file's own hooks: no uncaught error, unhandled rejection or pollution.
useProcessGuard()

/** What a WHATWG-URL router makes of a request target: its resolved path segments, decoded. */
function routed(target: string): string[] {
  return new URL(target, 'http://router.invalid').pathname.split('/').slice(1).map(decodeURIComponent)
}

beforeAll(async () => {
  server = await startHostileServer((request) => {
    const segments = routed(request.target)
    // A router that trusts the resolved path: /rest/v1/ (or anything off the two routes) answers
    // 200 with data of its own, which is exactly what must never be reached.
    if (request.method === 'PUT' && segments.length === 4 && segments[2] === 'customer-users') {
      return json(200, updatedUser(segments[3]))
    }
    if (request.method === 'GET' && segments.length === 5 && segments[2] === 'conversations' && segments[4] === 'messages') {
      const id = segments[3] as string
      return json(200, {
        data: [message(1, id)],
        pagination: { page: 1, limit: 50, total: 1, total_pages: 1 },
        conversation: { id, title: 't' },
      })
    }
    return json(200, { reached: request.target, resolved: `/${segments.join('/')}` })
  })
})
afterAll(async () => {
  await server.close()
})
beforeEach(() => {
  server.clear()
  client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0 })
})
afterEach(async () => {
  await client.close()
})

const DOT_SEGMENTS = ['.', '..'] as const

describe('the ids . and .. are refused before sending, in every path parameter', () => {
  const calls = [
    ['customerUsers.update', 'id', (id: string) => client.customerUsers.update(id, { name: 'n' })],
    [
      'customerUsers.withMetadata().update',
      'id',
      (id: string) => client.customerUsers.withMetadata(z.looseObject({})).update(id, { name: 'n' }),
    ],
    ['conversations.messages.list', 'conversationId', (id: string) => client.conversations.messages.list(id)],
  ] as const

  for (const [name, parameter, call] of calls) {
    it.each(DOT_SEGMENTS)(`${name}(%j): RequestValidationError naming the ${parameter}, nothing sent`, async (id) => {
      const error = await rejection(call(id))
      expect(error).toBeInstanceOf(RequestValidationError)
      const { issues, message: text } = error as RequestValidationError
      expect(issues).toHaveLength(1)
      expect(issues[0]?.path).toEqual([parameter])
      expect(issues[0]?.message).toContain('dot segment')
      expect(text).toContain(`"${id}" cannot be an id`)
      expect(text).toContain('Nothing was sent')
      expect(server.requests).toEqual([])
    })
  }

  it.each(DOT_SEGMENTS)('a for-await over messages.list(%j) rejects the same way, nothing sent', async (id) => {
    const error = await rejection(
      (async () => {
        for await (const _ of client.conversations.messages.list(id)) break
      })(),
    )
    expect(error).toBeInstanceOf(RequestValidationError)
    expect(server.requests).toEqual([])
  })

  it.each(DOT_SEGMENTS)('ids in a body follow the same rule: issueToken({ userId: %j }) and agentId', async (id) => {
    for (const params of [{ userId: id }, { userId: 'u-1', agentId: id }]) {
      const error = await rejection(client.auth.issueToken(params))
      expect(error).toBeInstanceOf(RequestValidationError)
      expect((error as RequestValidationError).message).toContain('dot segment')
    }
    expect(server.requests).toEqual([])
  })

  it('one error lists a dot-segment id together with the other bad arguments', async () => {
    const error = await rejection(client.conversations.messages.list('..', { limit: 1000 }))
    expect(error).toBeInstanceOf(RequestValidationError)
    expect((error as RequestValidationError).issues.map((issue) => issue.path.join('.')).sort()).toEqual(['conversationId', 'limit'])
  })
})

describe('every other id reaches a WHATWG-URL router as the one segment it is', () => {
  // Ids that look like dot segments, encoded dot segments, traversal or query syntax: each must
  // survive `new URL()` at the server as one segment that decodes to exactly the id.
  const ids = [
    '...',
    '.a',
    'a.',
    '..a',
    ' ..',
    '.. ',
    '%2E',
    '%2e',
    '%2E%2E',
    '.%2E',
    '%2e.',
    '../agents',
    '..%2F',
    'a/../b',
    '..\\',
    '?',
    '#',
    'ü',
  ]

  it.each(ids)('customerUsers.update(%j) is routed to /rest/v1/customer-users/<that id>', async (id) => {
    const updated = await client.customerUsers.update(id, { name: 'n' })
    expect(updated.id).toBe(id)
    expect(server.requests).toHaveLength(1)
    expect(routed(server.requests[0]?.target ?? '')).toEqual(['rest', 'v1', 'customer-users', id])
  })

  it.each(ids)('conversations.messages.list(%j) is routed to /rest/v1/conversations/<that id>/messages', async (id) => {
    const page = await client.conversations.messages.list(id)
    expect(page.conversation.id).toBe(id)
    expect(routed(server.requests[0]?.target ?? '')).toEqual(['rest', 'v1', 'conversations', id, 'messages'])
  })
})

it('the router really does resolve %2E%2E: the refusal is what keeps the call off /rest/v1/', async () => {
  // The same bytes a 0.2 client sent for update('..'), written by hand: the router resolves them.
  expect(routed('/rest/v1/customer-users/%2E%2E')).toEqual(['rest', 'v1', ''])
  expect(routed('/rest/v1/conversations/%2E/messages')).toEqual(['rest', 'v1', 'conversations', 'messages'])
})

it('a refused call leaves no socket behind and the client keeps working', async () => {
  await rejection(client.customerUsers.update('..', { name: 'n' }))
  const updated = await client.customerUsers.update('cu-1', { name: 'n' })
  expect(updated.id).toBe('cu-1')
  await client.close()
  await until(() => server.open === 0)
})
