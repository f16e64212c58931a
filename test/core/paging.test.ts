/** Auto-paging (spec, Paging rule): `for await`, `.pages()`, `await`, resumption, early break, prefetch. */
import { http, HttpResponse } from 'msw'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ChatServiceClient, ChatServiceError, MessagePage, Page, ResponseValidationError, type Agent, type Message } from 'chat-service-sdk'
import { API, BASE, KEY_ID, KEY_SECRET, agent, message } from '../helpers/fixtures.ts'
import { setupMsw } from '../helpers/msw.ts'

const msw = setupMsw()
let client: ChatServiceClient

beforeEach(() => {
  client = new ChatServiceClient({ baseUrl: BASE, keyId: KEY_ID, keySecret: KEY_SECRET, maxRetries: 0 })
})
afterEach(async () => {
  await client.close()
})

/**
 * Serves `items` page by page at `route` the way the spec describes: `page` and `limit` from the
 * query (defaults 1 and `defaultLimit`), `total_pages = ceil(total / limit)`.
 */
function serve(route: string, items: readonly unknown[], defaultLimit = 20, extra: Record<string, unknown> = {}): void {
  msw.use(
    http.get(route, ({ request }) => {
      const query = new URL(request.url).searchParams
      const page = Number(query.get('page') ?? '1')
      const limit = Number(query.get('limit') ?? String(defaultLimit))
      return HttpResponse.json({
        data: items.slice((page - 1) * limit, page * limit),
        pagination: { page, limit, total: items.length, total_pages: Math.ceil(items.length / limit) },
        ...extra,
      })
    }),
  )
}

async function sentPages(): Promise<(string | null)[]> {
  return (await msw.requests()).map((request) => request.url.searchParams.get('page'))
}

async function sentLimits(): Promise<(string | null)[]> {
  return (await msw.requests()).map((request) => request.url.searchParams.get('limit'))
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of iterable) out.push(item)
  return out
}

/** Lets pending I/O run, so that a request the SDK wrongly started would reach msw before we count. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
}

const agents = (n: number): Record<string, unknown>[] => Array.from({ length: n }, (_, i) => agent(i + 1))

describe('for await over every item', () => {
  it('0 items (total_pages 0): yields nothing after exactly one request', async () => {
    serve(`${API}/agents`, [])
    expect(await collect(client.agents.list())).toEqual([])
    await settle()
    expect(msw.count()).toBe(1)
  })

  it('1 page: one request', async () => {
    serve(`${API}/agents`, agents(3))
    expect(await collect(client.agents.list({ limit: 20 }))).toEqual(agents(3))
    await settle()
    expect(await sentPages()).toEqual(['1'])
  })

  it('an exactly full last page (total 40, limit 20): exactly 2 requests', async () => {
    serve(`${API}/agents`, agents(40))
    expect(await collect(client.agents.list({ limit: 20 }))).toEqual(agents(40))
    await settle()
    expect(await sentPages()).toEqual(['1', '2'])
  })

  it('many pages: every item once, in order, the same limit on every request', async () => {
    serve(`${API}/agents`, agents(23))
    expect(await collect(client.agents.list({ limit: 3 }))).toEqual(agents(23))
    expect(await sentPages()).toEqual(['1', '2', '3', '4', '5', '6', '7', '8'])
    expect(await sentLimits()).toEqual(Array(8).fill('3'))
  })

  it('the default limit is the same on every request', async () => {
    serve(
      `${API}/conversations`,
      Array.from({ length: 45 }, (_, i) => ({
        id: `c${i}`,
        title: 't',
        customer_user_id: 'u',
        message_count: 0,
        created_at: 'x',
        updated_at: 'y',
      })),
    )
    const all = await collect(client.conversations.list())
    expect(all).toHaveLength(45)
    const limits = await sentLimits()
    expect(limits).toHaveLength(3)
    expect(new Set(limits).size).toBe(1)
    expect(limits[0] ?? '20').toBe('20')
  })

  it('follows total_pages of the latest response, not the first', async () => {
    let call = 0
    msw.use(
      http.get(`${API}/agents`, ({ request }) => {
        call++
        const page = Number(new URL(request.url).searchParams.get('page'))
        // The first response says 5 pages; the second says only 2 (items were deleted meanwhile).
        const total_pages = call === 1 ? 5 : 2
        return HttpResponse.json({ data: [agent(page)], pagination: { page, limit: 1, total: total_pages, total_pages } })
      }),
    )
    expect(await collect(client.agents.list({ limit: 1 }))).toEqual([agent(1), agent(2)])
    await settle()
    // The list changed between pages 1 and 2 (its total fell): page 1 is read again before page 2's
    // items are yielded, in case one of them slipped back onto it (README, "Lists that move").
    expect(await sentPages()).toEqual(['1', '2', '1'])
  })

  it('resumes from page N: reads N..last only', async () => {
    serve(`${API}/agents`, agents(10))
    expect(await collect(client.agents.list({ page: 3, limit: 2 }))).toEqual(agents(10).slice(4))
    expect(await sentPages()).toEqual(['3', '4', '5'])
    expect(await sentLimits()).toEqual(['2', '2', '2'])
  })

  it('resuming past the last page yields nothing after one request', async () => {
    serve(`${API}/agents`, agents(4))
    expect(await collect(client.agents.list({ page: 7, limit: 2 }))).toEqual([])
    await settle()
    expect(await sentPages()).toEqual(['7'])
  })

  it('every list endpoint pages the same way', async () => {
    const users = Array.from({ length: 5 }, (_, i) => ({
      id: `u${i}`,
      external_id: `e${i}`,
      name: 'n',
      email: 'e',
      metadata: {},
      active: true,
      created_at: 'c',
      last_seen_at: 'l',
    }))
    serve(`${API}/customer-users`, users)
    expect(await collect(client.customerUsers.list({ limit: 2, external_id: 'x' }))).toEqual(users)
    expect(await sentPages()).toEqual(['1', '2', '3'])
  })
})

describe('early break', () => {
  it('breaking on the first page makes no further request', async () => {
    serve(`${API}/agents`, agents(10))
    const seen: Agent[] = []
    for await (const a of client.agents.list({ limit: 2 })) {
      seen.push(a)
      break
    }
    await settle()
    expect(seen).toEqual([agent(1)])
    expect(msw.count()).toBe(1)
  })

  it('breaking on the second page makes exactly two requests', async () => {
    serve(`${API}/agents`, agents(10))
    let n = 0
    for await (const _ of client.agents.list({ limit: 2 })) {
      if (++n === 3) break
    }
    await settle()
    expect(await sentPages()).toEqual(['1', '2'])
  })

  it('breaking out of .pages() makes no further request', async () => {
    serve(`${API}/agents`, agents(10))
    for await (const page of client.agents.list({ limit: 2 }).pages()) {
      expect(page.data).toEqual(agents(2))
      break
    }
    await settle()
    expect(msw.count()).toBe(1)
  })

  it('after an early break, the client still works', async () => {
    serve(`${API}/agents`, agents(10))
    for await (const _ of client.agents.list({ limit: 2 })) break
    expect(await collect(client.agents.list({ limit: 5 }))).toEqual(agents(10))
  })
})

describe('.pages()', () => {
  it('yields Page objects in order, each with its pagination', async () => {
    serve(`${API}/agents`, agents(5))
    const pages = await collect(client.agents.list({ limit: 2 }).pages())
    expect(pages.map((page) => page.pagination.page)).toEqual([1, 2, 3])
    expect(pages.map((page) => page.data)).toEqual([agents(5).slice(0, 2), agents(5).slice(2, 4), agents(5).slice(4)])
    expect(pages.map((page) => page.hasNextPage())).toEqual([true, true, false])
    for (const page of pages) expect(page).toBeInstanceOf(Page)
  })

  it('0 items: one empty page', async () => {
    serve(`${API}/agents`, [])
    const pages = await collect(client.agents.list().pages())
    expect(pages).toHaveLength(1)
    expect(pages[0]?.data).toEqual([])
    expect(pages[0]?.hasNextPage()).toBe(false)
    expect(msw.count()).toBe(1)
  })
})

describe('await gives the first page', () => {
  it('one request; hasNextPage() and getNextPage() walk on with the same limit', async () => {
    serve(`${API}/agents`, agents(5))
    const first = await client.agents.list({ limit: 2 })
    await settle()
    expect(msw.count()).toBe(1)
    expect(first.data).toEqual(agents(2))
    expect(first.hasNextPage()).toBe(true)

    const second = await first.getNextPage()
    expect(second.data).toEqual(agents(5).slice(2, 4))
    const third = await second.getNextPage()
    expect(third.data).toEqual([agent(5)])
    expect(third.hasNextPage()).toBe(false)
    expect(await sentPages()).toEqual(['1', '2', '3'])
    expect(await sentLimits()).toEqual(['2', '2', '2'])
  })

  it('getNextPage() on the last page rejects with ChatServiceError and sends nothing', async () => {
    serve(`${API}/agents`, agents(2))
    const only = await client.agents.list({ limit: 2 })
    expect(only.hasNextPage()).toBe(false)
    await expect(only.getNextPage()).rejects.toBeInstanceOf(ChatServiceError)
    await settle()
    expect(msw.count()).toBe(1)
  })

  it('getNextPage() on an empty result (total_pages 0) rejects', async () => {
    serve(`${API}/agents`, [])
    const empty = await client.agents.list()
    expect(empty.hasNextPage()).toBe(false)
    await expect(empty.getNextPage()).rejects.toBeInstanceOf(ChatServiceError)
    expect(msw.count()).toBe(1)
  })

  it('for await over an awaited page yields its items and those of later pages', async () => {
    serve(`${API}/agents`, agents(5))
    const second = await (await client.agents.list({ limit: 2 })).getNextPage()
    expect(await collect(second)).toEqual(agents(5).slice(2))
    expect(await sentPages()).toEqual(['1', '2', '3'])
  })
})

describe('messages', () => {
  const route = `${API}/conversations/conv-1/messages`
  const messages = Array.from({ length: 120 }, (_, i) => message(i + 1))
  const conversation = { id: 'conv-1', title: 'Support chat' }

  it('every page is a MessagePage carrying conversation; items in order', async () => {
    serve(route, messages, 50, { conversation })
    const pages = await collect(client.conversations.messages.list('conv-1').pages())
    expect(pages).toHaveLength(3)
    for (const page of pages) {
      expect(page).toBeInstanceOf(MessagePage)
      expect(page.conversation).toEqual(conversation)
    }
    expect(pages.flatMap((page) => page.data)).toEqual(messages)
  })

  it('the default limit is 50 (not sent, or sent as 50), the same on every request, never 20', async () => {
    serve(route, messages, 50, { conversation })
    const all: Message[] = await collect(client.conversations.messages.list('conv-1'))
    expect(all).toEqual(messages)
    const limits = await sentLimits()
    expect(limits).toHaveLength(3)
    expect(new Set(limits).size).toBe(1)
    expect(limits[0] ?? '50').toBe('50')
  })

  it('getNextPage() of a message page is a MessagePage too', async () => {
    serve(route, messages, 50, { conversation })
    const next = await (await client.conversations.messages.list('conv-1', { limit: 100 })).getNextPage()
    expect(next).toBeInstanceOf(MessagePage)
    expect(next.conversation).toEqual(conversation)
    expect(next.data).toEqual(messages.slice(100))
  })
})

describe('prefetch', () => {
  it.each([1, 3, 32])('{ prefetch: %i } gives the same items in the same order, each page requested once', async (prefetch) => {
    serve(`${API}/agents`, agents(20))
    const items = await collect(client.agents.list({ limit: 3 }, { prefetch }))
    expect(items).toEqual(agents(20))
    await settle()
    const pages = await sentPages()
    expect([...pages].sort((a, b) => Number(a) - Number(b))).toEqual(['1', '2', '3', '4', '5', '6', '7'])
    expect(await sentLimits()).toEqual(Array(7).fill('3'))
  })

  it('breaking out early with prefetch leaves nothing failing behind, and the client still works', async () => {
    serve(`${API}/agents`, agents(20))
    const seen: Agent[] = []
    for await (const a of client.agents.list({ limit: 2 }, { prefetch: 3 })) {
      seen.push(a)
      break
    }
    await settle()
    expect(seen).toEqual([agent(1)])
    const pages = await sentPages()
    // Page 1, plus at most the 3 prefetched pages; never beyond.
    expect(pages.length).toBeLessThanOrEqual(4)
    for (const page of pages) expect(Number(page)).toBeLessThanOrEqual(4)
    expect(await collect(client.agents.list({ limit: 10 }))).toEqual(agents(20))
  })

  it('prefetch never asks beyond total_pages', async () => {
    serve(`${API}/agents`, agents(4))
    expect(await collect(client.agents.list({ limit: 2 }, { prefetch: 10 }))).toEqual(agents(4))
    await settle()
    expect([...(await sentPages())].sort()).toEqual(['1', '2'])
  })

  it('prefetch with resumption starts at page N', async () => {
    serve(`${API}/agents`, agents(10))
    expect(await collect(client.agents.list({ page: 2, limit: 3 }, { prefetch: 3 }))).toEqual(agents(10).slice(3))
    await settle()
    expect([...(await sentPages())].sort()).toEqual(['2', '3', '4'])
  })
})

describe('a pagination block that contradicts the request', () => {
  function answer(pagination: Record<string, unknown>): void {
    msw.use(http.get(`${API}/agents`, () => HttpResponse.json({ data: [agent(1)], pagination })))
  }

  it('a different page on the first request → ResponseValidationError', async () => {
    answer({ page: 2, limit: 20, total: 60, total_pages: 3 })
    const error = await client.agents.list().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect((error as ResponseValidationError).issues.map((issue) => issue.path)).toContainEqual(['pagination', 'page'])
    expect(msw.count()).toBe(1)
  })

  it('a later page answered with page 1 → ResponseValidationError instead of looping', async () => {
    // The service ignores ?page and always answers page 1 of 3.
    answer({ page: 1, limit: 1, total: 3, total_pages: 3 })
    const seen: unknown[] = []
    const error = await (async () => {
      for await (const a of client.agents.list({ limit: 1 })) seen.push(a)
    })().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect(seen).toEqual([agent(1)])
    expect(msw.count()).toBe(2)
  })

  it.each([
    ['non-integer total_pages', { page: 1, limit: 20, total: 30, total_pages: 1.5 }, ['pagination', 'total_pages']],
    ['negative total_pages', { page: 1, limit: 20, total: 0, total_pages: -1 }, ['pagination', 'total_pages']],
    ['string total_pages', { page: 1, limit: 20, total: 0, total_pages: '3' }, ['pagination', 'total_pages']],
    ['null total_pages', { page: 1, limit: 20, total: 0, total_pages: null }, ['pagination', 'total_pages']],
    ['non-integer page', { page: 1.5, limit: 20, total: 0, total_pages: 1 }, ['pagination', 'page']],
    ['missing pagination.total', { page: 1, limit: 20, total_pages: 1 }, ['pagination', 'total']],
  ])('%s → ResponseValidationError', async (_label, pagination, path) => {
    answer(pagination)
    const error = await collect(client.agents.list()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ResponseValidationError)
    expect((error as ResponseValidationError).issues.map((issue) => issue.path)).toContainEqual(path)
    await settle()
    expect(msw.count()).toBe(1)
  })

  it('an error on a later page surfaces after the earlier items', async () => {
    let call = 0
    msw.use(
      http.get(`${API}/agents`, ({ request }) => {
        call++
        const page = Number(new URL(request.url).searchParams.get('page'))
        if (call === 2) return HttpResponse.json({ data: 'oops', pagination: { page, limit: 1, total: 3, total_pages: 3 } })
        return HttpResponse.json({ data: [agent(page)], pagination: { page, limit: 1, total: 3, total_pages: 3 } })
      }),
    )
    const seen: unknown[] = []
    const error = await (async () => {
      for await (const a of client.agents.list({ limit: 1 })) seen.push(a)
    })().catch((e: unknown) => e)
    expect(seen).toEqual([agent(1)])
    expect(error).toBeInstanceOf(ResponseValidationError)
  })
})
