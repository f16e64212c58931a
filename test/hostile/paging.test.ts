/**
 * Paging that always ends (issue 19). A service that lies in its pagination block (a
 * `total_pages` that grows with every page, one that contradicts `total`, empty pages before the
 * last, the same items again) used to be paged forever by `for await`, `.pages()`, prefetch and
 * `listAll`. The rules in src/pagination/rules.ts end every such iteration with a
 * ResponseValidationError that says what the service claimed, after a bounded number of requests.
 * `listAll` and `listNew` also read a conversation listed twice once, and refuse messages of
 * another conversation and conversation ids that cannot be a path segment.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { ChatServiceClient, ResponseValidationError, UnstableListError, type Message } from 'chat-service-sdk'
import { KEY_ID, KEY_SECRET, agent, conversation, message } from '../helpers/fixtures.ts'
import { json, startHostileServer, targetOf, type HostileServer, type RawRequest, useProcessGuard } from './hostile-server.ts'

let server: HostileServer
let client: ChatServiceClient
// Around each test, after this file's own hooks: no uncaught error, unhandled rejection or pollution.
useProcessGuard()

/** What the service answers a list request with, given the page and limit asked. */
type Lie = (
  page: number,
  limit: number,
  request: RawRequest,
) => { data: unknown[]; pagination: Record<string, number>; conversation?: unknown }

async function serve(lie: Lie): Promise<void> {
  server = await startHostileServer((request) => {
    const { query, pathname } = targetOf(request)
    const page = Number(query.get('page') ?? '1')
    const limit = Number(query.get('limit') ?? '20')
    const body = lie(page, limit, request)
    const messages = /\/conversations\/([^/]+)\/messages$/.exec(pathname)
    return json(200, messages === null ? body : { conversation: { id: decodeURIComponent(messages[1] as string), title: 't' }, ...body })
  })
  client = new ChatServiceClient({ baseUrl: server.origin, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0, logLevel: 'off' })
}

afterEach(async () => {
  await client.close()
  await server.close()
})

/** Runs an iteration to its end; returns how many items it yielded and what it threw. */
async function drain(items: AsyncIterable<unknown>): Promise<{ count: number; error: unknown }> {
  let count = 0
  try {
    for await (const _ of items) count++
  } catch (error) {
    return { count, error }
  }
  return { count, error: undefined }
}

const agents = (page: number, limit: number): unknown[] => Array.from({ length: limit }, (_, i) => agent((page - 1) * limit + i))

/**
 * total_pages one more than the page asked, with fresh items on every page after the last item of
 * the page before (as if an item had been inserted at the front before each read): a list that
 * never ends, yet every page lines up with the one before it.
 */
const growing: Lie = (page, limit) => ({
  data: page === 1 ? agents(1, limit) : [agent((page - 1) * limit - 1), ...agents(page, limit).slice(1)],
  pagination: { page, limit, total: (page + 1) * limit, total_pages: page + 1 },
})

/** A `total` that changes with every response, and pages with nothing in common: a list that never holds still. */
const restless = (): Lie => {
  let answers = 0
  return (page, limit) => {
    answers++
    return {
      data: agents(answers * 100 + page, limit),
      pagination: { page, limit, total: 40 + answers, total_pages: Math.ceil((40 + answers) / limit) },
    }
  }
}

describe('a list whose total_pages grows with every page', () => {
  it.each([
    ['for await', (c: ChatServiceClient) => c.agents.list({ limit: 5 })],
    ['.pages()', (c: ChatServiceClient) => c.agents.list({ limit: 5 }).pages()],
    ['prefetch 4', (c: ChatServiceClient) => c.agents.list({ limit: 5 }, { prefetch: 4 })],
  ])(
    '%s stops at 2 × T + 10 pages (T from the first page) with a ResponseValidationError saying what was claimed',
    async (_how, iterate) => {
      await serve(growing)
      const { error } = await drain(iterate(client))
      expect(error).toBeInstanceOf(ResponseValidationError)
      const { issues, status } = error as ResponseValidationError
      expect(status).toBe(200)
      expect(issues.map((issue) => issue.path)).toEqual([['pagination', 'total_pages']])
      expect(issues[0]?.message).toContain('after claiming 2 on the first page read')
      // First page: total_pages 2 → at most page 14; the 15th breaks the rule (prefetch may have asked a few more).
      expect(server.requests.length).toBeGreaterThanOrEqual(15)
      expect(server.requests.length).toBeLessThanOrEqual(19)
    },
  )
})

describe('a list that never holds still', () => {
  it.each([
    ['for await', (c: ChatServiceClient) => c.agents.list({ limit: 5 })],
    ['.pages()', (c: ChatServiceClient) => c.agents.list({ limit: 5 }).pages()],
    ['prefetch 4', (c: ChatServiceClient) => c.agents.list({ limit: 5 }, { prefetch: 4 })],
  ])('%s ends with UnstableListError after a bounded number of requests, every item yielded once', async (_how, iterate) => {
    await serve(restless())
    const ids: string[] = []
    let error: unknown
    try {
      for await (const item of iterate(client)) {
        for (const agent of 'data' in item ? (item.data as { id: string }[]) : [item as { id: string }]) ids.push(agent.id)
      }
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(UnstableListError)
    expect(error).toMatchObject({ name: 'UnstableListError', operation: 'agents.list', retryable: true })
    expect((error as UnstableListError).message).toContain('the list kept moving while it was read')
    expect(new Set(ids).size).toBe(ids.length)
    // 12 pages read again in a row without getting further, on top of the pages read once (prefetch: a few more).
    expect(server.requests.length).toBeLessThanOrEqual(2 + 2 * 13 + 4)
  })
})

describe('a pagination block that contradicts itself', () => {
  const huge: Lie = (page, limit) => ({ data: agents(page, limit), pagination: { page, limit, total: 40, total_pages: 1e12 } })

  it('total_pages 1e12 with total 40 at 20 a page: the first page is refused, one request', async () => {
    await serve(huge)
    const error = await client.agents.list().then(
      () => undefined,
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect((error as ResponseValidationError).message).toContain('total_pages is 1000000000000, but 40 items at 20 a page make 2 pages')
    expect(server.requests).toHaveLength(1)
  })

  it('the same in an iteration: no item yielded, one request', async () => {
    await serve(huge)
    const { count, error } = await drain(client.agents.list())
    expect(count).toBe(0)
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect(server.requests).toHaveLength(1)
  })

  it('an empty list may say total_pages 0 or 1', async () => {
    await serve((page, limit) => ({ data: [], pagination: { page, limit, total: 0, total_pages: 1 } }))
    expect(await drain(client.agents.list())).toEqual({ count: 0, error: undefined })
    expect(server.requests).toHaveLength(1)
  })
})

describe('empty pages before the last', () => {
  it('end the iteration at the first one: a million items claimed, none sent', async () => {
    await serve((page, limit) => ({ data: [], pagination: { page, limit, total: 1_000_000, total_pages: Math.ceil(1_000_000 / limit) } }))
    const { count, error } = await drain(client.agents.list({ limit: 100 }))
    expect(count).toBe(0)
    expect((error as ResponseValidationError).issues).toEqual([
      expect.objectContaining({ path: ['data'], message: 'Page 1 of 10000 is empty: only the last page may be' }),
    ])
    expect(server.requests).toHaveLength(1)
  })

  it('listAll over empty conversation pages stops at once instead of requesting thousands of pages', async () => {
    await serve((page, limit) => ({ data: [], pagination: { page, limit, total: 10_000_000, total_pages: Math.ceil(10_000_000 / limit) } }))
    const { count, error } = await drain(client.conversations.messages.listAll())
    expect(count).toBe(0)
    expect(error).toBeInstanceOf(ResponseValidationError)
    // The scan reads ahead while it waits, but never past the rule: a handful of pages, not thousands.
    expect(server.requests.length).toBeLessThanOrEqual(8)
  })
})

describe('the same items again', () => {
  it('a page that only repeats the page before it ends the iteration after the first', async () => {
    await serve((page, limit) => ({
      data: agents(1, limit),
      pagination: { page, limit, total: 1_000, total_pages: Math.ceil(1_000 / limit) },
    }))
    const { count, error } = await drain(client.agents.list())
    expect(count).toBe(20)
    // One page alone that repeats the page before may be the list moving; two in a row is the service.
    expect((error as ResponseValidationError).issues).toEqual([
      expect.objectContaining({
        message: 'Page 3 holds only items already on page 2: the service repeats itself, so the iteration stops here',
      }),
    ])
    expect(server.requests).toHaveLength(3)
  })
})

describe('listAll and listNew read what they are given, once', () => {
  /** Conversations served: page 1 and 2 of the list (100 a page), each conversation with `size` messages. */
  function company(pages: unknown[][], size = 2): Lie {
    return (page, limit, request) => {
      const { pathname } = targetOf(request)
      const messages = /\/conversations\/([^/]+)\/messages$/.exec(pathname)
      if (messages === null) {
        const total = pages.reduce((n, p) => n + p.length, 0)
        return { data: pages[page - 1] ?? [], pagination: { page, limit, total, total_pages: Math.ceil(total / limit) } }
      }
      const id = decodeURIComponent(messages[1] as string)
      return { data: Array.from({ length: size }, (_, i) => message(i, id)), pagination: { page, limit, total: size, total_pages: 1 } }
    }
  }

  const conversations = (from: number, n: number): Record<string, unknown>[] =>
    Array.from({ length: n }, (_, i) => ({ ...conversation(from + i), message_count: 2 }))

  it('a conversation listed twice (the list shifted between its pages) is read once', async () => {
    const first = conversations(0, 100)
    // Page 2 starts with the last conversation of page 1 again.
    await serve(company([first, [first[99], ...conversations(100, 20)]]))
    const seen: Message[] = []
    for await (const m of client.conversations.messages.listAll()) seen.push(m)
    const perConversation = new Map<string, number>()
    for (const m of seen) perConversation.set(m.conversation_id, (perConversation.get(m.conversation_id) ?? 0) + 1)
    expect(perConversation.size).toBe(120)
    expect([...perConversation.values()].every((n) => n === 2)).toBe(true)
    const duplicate = (first[99] as { id: string }).id
    expect(server.requests.filter((r) => targetOf(r).pathname.includes(`/conversations/${duplicate}/messages`))).toHaveLength(1)
  })

  it.each(['listAll', 'listNew'] as const)(
    '%s: a message of another conversation is a ResponseValidationError, not data',
    async (method) => {
      await serve((page, limit, request) => {
        const { pathname } = targetOf(request)
        if (pathname.endsWith('/conversations')) return { data: [conversation(1)], pagination: { page, limit, total: 1, total_pages: 1 } }
        return { data: [message(1, 'conv-1'), message(2, 'conv-other')], pagination: { page, limit, total: 2, total_pages: 1 } }
      })
      const { count, error } = await drain(client.conversations.messages[method]())
      expect(count).toBe(0)
      const { issues } = error as ResponseValidationError
      expect(issues.map((issue) => issue.path)).toEqual([['data', 1, 'conversation_id']])
      expect(issues[0]?.message).toContain('is of conversation conv-other, not of conv-1')
    },
  )

  it.each(['..', '.'])('a conversation id %j from the service is refused by name, and nothing is requested for it', async (id) => {
    await serve((page, limit) => ({ data: [{ ...conversation(1), id }], pagination: { page, limit, total: 1, total_pages: 1 } }))
    const { error } = await drain(client.conversations.messages.listAll())
    expect(error).toBeInstanceOf(ResponseValidationError)
    const [issue] = (error as ResponseValidationError).issues
    expect(issue?.path).toEqual(['data', 0, 'id'])
    expect(issue?.message).toContain(`Conversation "${id}"`)
    expect(server.requests).toHaveLength(1)
  })

  it("listAll stops a conversation whose messages' total_pages grows with every page", async () => {
    await serve((page, limit, request) => {
      const { pathname } = targetOf(request)
      if (pathname.endsWith('/conversations')) return { data: [conversation(1)], pagination: { page, limit, total: 1, total_pages: 1 } }
      // Every page after the first repeats the last message of the page before (it lines up with it).
      const first = page === 1 ? 0 : 1
      return {
        data: [
          ...(page === 1 ? [] : [message((page - 1) * limit - 1, 'conv-1')]),
          ...Array.from({ length: limit - first }, (_, i) => message((page - 1) * limit + first + i, 'conv-1')),
        ],
        pagination: { page, limit, total: (page + 1) * limit, total_pages: page + 1 },
      }
    })
    const { count, error } = await drain(client.conversations.messages.listAll({ limit: 10, concurrency: 2 }))
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect(count).toBe(10 + 13 * 9) // pages 1 to 14 (2 × 2 + 10), each after the first bringing 9 new messages
    // Each page fetched ahead disagrees with the page before it (its total): it is fetched again after it.
    expect(server.requests.length).toBeLessThanOrEqual(1 + 2 * 15 + 4)
  })
})
