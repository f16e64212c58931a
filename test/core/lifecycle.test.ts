/** client.close(), `await using`, and a caller-owned dispatcher. */
import { Agent } from 'undici'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ChatServiceClient, ChatServiceError, APIError } from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, emptyListFor, tokenResponse, updatedUser } from '../helpers/fixtures.ts'
import { splitTarget, startWireServer, type WireServer } from '../helpers/wire.ts'

let server: WireServer

beforeAll(async () => {
  server = await startWireServer((request) => {
    if (request.method === 'POST') return { body: tokenResponse() }
    if (request.method === 'PUT') return { body: updatedUser() }
    return { body: emptyListFor(splitTarget(request.target).pathname) }
  })
})
afterAll(async () => {
  await server.close()
})
beforeEach(() => {
  server.requests.length = 0
})

function make(extra: Partial<{ dispatcher: Agent }> = {}): ChatServiceClient {
  return new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0, ...extra })
}

/** Every endpoint, each expected to reject with a ChatServiceError that is not an APIError (nothing sent). */
async function expectEveryCallRefused(client: ChatServiceClient): Promise<void> {
  const calls: [string, () => PromiseLike<unknown>][] = [
    ['issueToken', () => client.auth.issueToken({ userId: 'u' })],
    ['customerUsers.list', () => client.customerUsers.list()],
    ['customerUsers.update', () => client.customerUsers.update('cu-1', { name: 'n' })],
    ['agents.list', () => client.agents.list()],
    ['conversations.list', () => client.conversations.list()],
    ['messages.list', () => client.conversations.messages.list('conv-1')],
  ]
  for (const [name, call] of calls) {
    let error: unknown
    try {
      await call()
    } catch (e) {
      error = e
    }
    expect(error, name).toBeInstanceOf(ChatServiceError)
    expect(error, name).not.toBeInstanceOf(APIError)
    expect((error as Error).message, name).toMatch(/close/i)
  }
}

describe('close()', () => {
  it('later calls reject with ChatServiceError and send nothing', async () => {
    const client = make()
    await client.agents.list()
    expect(server.requests).toHaveLength(1)
    await client.close()
    await expectEveryCallRefused(client)
    expect(server.requests).toHaveLength(1)
  })

  it('a client closed before any request refuses too', async () => {
    const client = make()
    await client.close()
    await expectEveryCallRefused(client)
    expect(server.requests).toHaveLength(0)
  })

  it('is idempotent', async () => {
    const client = make()
    await client.close()
    await expect(client.close()).resolves.toBeUndefined()
  })

  it('lets an in-flight request finish', async () => {
    const client = make()
    const pending = client.agents.list()
    const closing = client.close()
    const page = await pending
    await closing
    expect(page.data).toEqual([])
  })

  it('iterating a page after close rejects when it needs another request', async () => {
    server.respond((request) => {
      const page = Number(splitTarget(request.target).query.get('page') ?? '1')
      return {
        body: {
          data: [{ id: `a${page}`, name: 'n', active: true, created_at: 'c', updated_at: 'u' }],
          pagination: { page, limit: 1, total: 2, total_pages: 2 },
        },
      }
    })
    const client = make()
    try {
      const first = await client.agents.list({ limit: 1 })
      await client.close()
      await expect(first.getNextPage()).rejects.toBeInstanceOf(ChatServiceError)
      expect(server.requests).toHaveLength(1)
    } finally {
      server.respond((request) => ({ body: emptyListFor(splitTarget(request.target).pathname) }))
    }
  })
})

describe('await using', () => {
  it('closes the client at the end of the block', async () => {
    let outside: ChatServiceClient | undefined
    {
      await using client = make()
      outside = client
      await client.agents.list()
    }
    expect(server.requests).toHaveLength(1)
    await expectEveryCallRefused(outside)
    expect(server.requests).toHaveLength(1)
  })

  it('closes the client when the block throws', async () => {
    let outside: ChatServiceClient | undefined
    await expect(
      (async () => {
        await using client = make()
        outside = client
        throw new Error('boom')
      })(),
    ).rejects.toThrow('boom')
    expect(outside).toBeDefined()
    await expectEveryCallRefused(outside as ChatServiceClient)
  })
})

describe('a caller-owned dispatcher', () => {
  it('carries the requests, and stays open after client.close()', async () => {
    const dispatcher = new Agent()
    try {
      const client = make({ dispatcher })
      await client.agents.list()
      expect(server.requests).toHaveLength(1)
      await client.close()
      await expectEveryCallRefused(client)
      expect(dispatcher.closed).toBe(false)
      expect(dispatcher.destroyed).toBe(false)
      // Still usable by its owner.
      const response = await dispatcher.request({ origin: server.origin, path: '/rest/v1/agents', method: 'GET' })
      await response.body.dump()
      expect(response.statusCode).toBe(200)
    } finally {
      await dispatcher.close()
    }
  })
})
