// conversations.messages.listAll at the wire, against a loopback server the tests control
// (test/helpers/company-server.ts): the in-flight bound measured at the server, bounded read-ahead
// with a slow consumer, order when pages arrive out of order, early break and abort (requests
// closed, nothing more sent, no unhandled rejection), errors in order, and vanished conversations.
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import {
  APIUserAbortError,
  BadRequestError,
  ChatServiceClient,
  InternalServerError,
  NotFoundError,
  type ClientOptions,
  type Message,
} from 'chat-service-sdk'
import { DEFAULT_LIST_ALL_CONCURRENCY } from '../../src/resources/messages.ts'
import { mulberry32 } from 'chat-service-sdk/testing'
import { modelOf, nestedOrder, startCompanyServer, type CompanyServer, type PageRequest } from '../helpers/company-server.ts'
import { KEY } from '../helpers/list-all-data.ts'
import { recordingLogger, until } from '../helpers/loopback.ts'

const open: { server: CompanyServer; client: ChatServiceClient }[] = []

afterEach(async () => {
  for (const { server, client } of open.splice(0)) {
    await client.close()
    await server.close()
  }
})

async function serve(
  sizes: readonly number[],
  options: Partial<ClientOptions> = {},
): Promise<{ server: CompanyServer; client: ChatServiceClient }> {
  const server = await startCompanyServer(modelOf(sizes))
  const client = new ChatServiceClient({ baseUrl: server.origin, ...KEY, ...options })
  open.push({ server, client })
  return { server, client }
}

/** Is `request` page `page` of conversation `conversation`'s messages? */
const isPage = (request: PageRequest, conversation: string, page: number): boolean =>
  request.kind === 'messages' && request.conversationId === conversation && request.page === page

/** A promise resolved once the server has answered a request matching `predicate`. */
function answered(server: CompanyServer, predicate: (request: PageRequest) => boolean): Promise<void> {
  return until(() => server.requests.some((request) => request.answered && predicate(request)), 10_000)
}

/** Iterates to the end or the first error, keeping what was yielded. */
async function drain(messages: AsyncIterable<Message>, each?: (message: Message) => unknown): Promise<{ ids: string[]; error: unknown }> {
  const ids: string[] = []
  try {
    for await (const message of messages) {
      ids.push(message.id)
      await each?.(message)
    }
  } catch (error) {
    return { ids, error }
  }
  return { ids, error: undefined }
}

/** Collects unhandled rejections while `body` runs and for a moment after it. */
async function unhandledRejectionsOf(body: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = []
  const listener = (reason: unknown): void => {
    seen.push(reason)
  }
  process.on('unhandledRejection', listener)
  try {
    await body()
    await sleep(100)
  } finally {
    process.off('unhandledRejection', listener)
  }
  return seen
}

describe('requests in flight', () => {
  // 250 conversations (three conversation pages) of 0 to 34 messages: about 500 pages at limit 10.
  const sizes = Array.from({ length: 250 }, (_, i) => (i * 13) % 35)

  it.each([1, 4, 8, 16])(
    'never more than concurrency %i at the server, conversation pages included, and exactly that many at the peak',
    async (concurrency) => {
      const { server, client } = await serve(sizes)
      // Latency makes requests overlap; slow conversation pages are in flight next to message pages.
      // The first 4 × concurrency message pages (64 at 16) take 30 ms, so that all `concurrency`
      // slots fill even when a loaded machine dispatches slowly (at 3 ms each, CI under load once
      // saw a peak of 15 of 16); at concurrency 1, 64 of them were 2 s of waiting on one slot.
      let messagePages = 0
      server.decide((request) => ({ delayMs: request.kind === 'conversations' ? 40 : messagePages++ < 4 * concurrency ? 30 : 3 }))
      let peakWithConversationPage = 0
      const conversationPageInFlight = (): boolean => server.requests.some((r) => r.kind === 'conversations' && !r.answered && !r.aborted)
      const watch = setInterval(() => {
        if (conversationPageInFlight()) peakWithConversationPage = Math.max(peakWithConversationPage, server.inFlight)
      }, 1)
      try {
        const { ids, error } = await drain(client.conversations.messages.listAll({ limit: 10, concurrency }))
        expect(error).toBeUndefined()
        expect(ids).toEqual(nestedOrder(server.conversations))
      } finally {
        clearInterval(watch)
      }
      expect(server.peakInFlight).toBe(concurrency)
      expect(peakWithConversationPage).toBeLessThanOrEqual(concurrency)
      // The conversation list twice: the scan, then its second scan (listAll's default; README, "Lists that move").
      expect(server.requests.filter((r) => r.kind === 'conversations').map((r) => r.page)).toEqual([1, 2, 3, 1, 2, 3])
    },
  )

  it('with no params: 100 messages a page and 8 requests in flight (the documented defaults)', async () => {
    // 60 conversations of 150 messages: two pages each at limit 100, enough to fill 8 slots.
    const { server, client } = await serve(Array.from({ length: 60 }, () => 150))
    // The first message pages are held until 200 ms after the eighth arrives, so the peak is the
    // client's limit however slow the machine (answered after 3 ms, a loaded CI run saw 7 at once),
    // and a ninth, if the client sent one, would arrive while they are held; a client that never
    // sends 8 at once is let go after 2 s and fails below rather than hanging.
    let release = (): void => {}
    const eighth = new Promise<void>((resolve) => (release = resolve))
    const fallback = setTimeout(release, 2_000)
    let messagePages = 0
    server.decide((request) => {
      if (request.kind !== 'messages') return undefined
      if (++messagePages === DEFAULT_LIST_ALL_CONCURRENCY) setTimeout(release, 200)
      return { hold: eighth }
    })
    const { ids, error } = await drain(client.conversations.messages.listAll())
    clearTimeout(fallback)
    expect(error).toBeUndefined()
    expect(ids).toEqual(nestedOrder(server.conversations))
    expect(server.peakInFlight).toBe(DEFAULT_LIST_ALL_CONCURRENCY)
    expect(DEFAULT_LIST_ALL_CONCURRENCY).toBe(8)
    expect(new Set(server.requests.filter((r) => r.kind === 'messages').map((r) => r.limit))).toEqual(new Set([100]))
  })

  it('keeps the order of the nested loop when pages arrive in any order', async () => {
    const random = mulberry32(7)
    for (const sizes of [
      [300, 4, 0, 9, 17, 1, 0, 22],
      [4, 0, 9, 300, 17, 1, 0, 22],
      Array.from({ length: 130 }, (_, i) => (i === 60 ? 120 : (i * 5) % 8)),
    ]) {
      const { server, client } = await serve(sizes)
      server.decide(() => ({ delayMs: Math.floor(random() * 8) }))
      const { ids, error } = await drain(client.conversations.messages.listAll({ limit: 7, concurrency: 12 }))
      expect(error).toBeUndefined()
      expect(ids).toEqual(nestedOrder(server.conversations))
    }
  })
})

describe('bounded memory', () => {
  it('with a slow consumer and a huge conversation at the head, pages answered but not yet consumed never exceed 4 × concurrency', async () => {
    const concurrency = 4
    const limit = 5
    // 80 pages at the head, then 60 small conversations (none empty: every page answered is one the consumer sees).
    const sizes = [400, ...Array.from({ length: 60 }, (_, i) => 1 + ((i * 7) % 12))]
    const { server, client } = await serve(sizes)
    const seenPages = new Set<string>()
    let answeredPages = 0
    let maxAhead = 0
    server.onAnswered((request) => {
      if (request.kind !== 'messages') return
      answeredPages++
      maxAhead = Math.max(maxAhead, answeredPages - seenPages.size)
    })
    const positions = new Map(
      server.conversations.flatMap((c) => c.messages.map((id, index) => [id, `${c.id}/${Math.floor(index / limit) + 1}`] as const)),
    )
    const { ids, error } = await drain(client.conversations.messages.listAll({ limit, concurrency }), async (message) => {
      seenPages.add(positions.get(message.id) as string)
      maxAhead = Math.max(maxAhead, answeredPages - seenPages.size)
      await sleep(1) // the consumer is much slower than the loopback server
    })
    expect(error).toBeUndefined()
    expect(ids).toEqual(nestedOrder(server.conversations))
    expect(maxAhead).toBeLessThanOrEqual(4 * concurrency)
    // It does read ahead of the slow consumer (the measure is not trivially zero).
    expect(maxAhead).toBeGreaterThan(concurrency)
  })
})

describe('progress.total', () => {
  it('stays undefined until the last conversation page is read, then is the sum of message_count', async () => {
    const sizes = Array.from({ length: 250 }, (_, i) => 1 + (i % 4)) // three conversation pages
    const sum = sizes.reduce((a, b) => a + b, 0)
    const { server, client } = await serve(sizes)
    // The last conversation page comes only once the consumer is well into the first one.
    let release = (): void => undefined
    const released = new Promise<void>((resolve) => (release = resolve))
    const last = (request: PageRequest): boolean => request.kind === 'conversations' && request.page === 3
    server.decide((request) => (last(request) ? { hold: released } : undefined))
    const all = client.conversations.messages.listAll({ limit: 2, concurrency: 4 })
    const seen: { total: number | undefined; lastPageRead: boolean }[] = []
    const { error } = await drain(all, () => {
      seen.push({ total: all.progress.total, lastPageRead: server.requests.some((r) => last(r) && r.answered) })
      if (seen.length === 50) release()
    })
    expect(error).toBeUndefined()
    // Never a partial sum: undefined until the last page had arrived, then the whole sum.
    expect(seen.slice(0, 50).every((p) => p.total === undefined)).toBe(true)
    expect(seen.every((p) => p.total === undefined || (p.total === sum && p.lastPageRead))).toBe(true)
    expect(all.progress).toEqual({ done: sum, total: sum })
  })
})

describe('leaving the loop early', () => {
  // The first conversation is answered at once; every other page is held until the server closes.
  async function heldServer(): Promise<{ server: CompanyServer; client: ChatServiceClient }> {
    const served = await serve(Array.from({ length: 20 }, () => 40))
    const never = new Promise<void>(() => undefined)
    served.server.decide((request) => (request.kind === 'messages' && request.conversationId !== 'c000' ? { hold: never } : undefined))
    return served
  }

  /** Resolves once `concurrency` held requests are open at the server, so that leaving the loop has something to abort. */
  const heldOpen = (server: CompanyServer, concurrency: number): Promise<void> =>
    until(() => server.requests.filter((request) => !request.answered && !request.aborted).length === concurrency)

  /** After the loop was left: what was in flight is closed by the client, and nothing new arrives. */
  async function expectAbortedAndQuiet(server: CompanyServer): Promise<void> {
    await until(() => server.inFlight === 0)
    const unanswered = server.requests.filter((request) => !request.answered)
    expect(unanswered).toHaveLength(4)
    expect(unanswered.every((request) => request.aborted)).toBe(true)
    const sent = server.requests.length
    await sleep(150)
    expect(server.requests).toHaveLength(sent)
    expect(server.inFlight).toBe(0)
  }

  it('break: aborts the requests in flight, sends nothing more, leaves no unhandled rejection', async () => {
    const { server, client } = await heldServer()
    const rejections = await unhandledRejectionsOf(async () => {
      const ids: string[] = []
      for await (const message of client.conversations.messages.listAll({ limit: 10, concurrency: 4 })) {
        ids.push(message.id)
        if (ids.length === 25) {
          await heldOpen(server, 4)
          break
        }
      }
      expect(ids).toEqual(nestedOrder(server.conversations).slice(0, 25))
      await expectAbortedAndQuiet(server)
    })
    expect(rejections).toEqual([])
  })

  it('an exception thrown in the loop body: the same, and the exception is the one that surfaces', async () => {
    const { server, client } = await heldServer()
    const rejections = await unhandledRejectionsOf(async () => {
      const boom = new Error('consumer failed')
      const { ids, error } = await drain(client.conversations.messages.listAll({ limit: 10, concurrency: 4 }), async (message) => {
        if (message.id !== 'c000-m0024') return
        await heldOpen(server, 4)
        throw boom
      })
      expect(error).toBe(boom)
      expect(ids).toHaveLength(25)
      await expectAbortedAndQuiet(server)
    })
    expect(rejections).toEqual([])
  })

  it('an aborted signal: APIUserAbortError, requests in flight closed, nothing more sent', async () => {
    const { server, client } = await heldServer()
    const controller = new AbortController()
    const rejections = await unhandledRejectionsOf(async () => {
      const { ids, error } = await drain(
        client.conversations.messages.listAll({ limit: 10, concurrency: 4 }, { signal: controller.signal }),
        async (message) => {
          if (message.id !== 'c000-m0004') return
          await heldOpen(server, 4)
          controller.abort()
        },
      )
      expect(error).toBeInstanceOf(APIUserAbortError)
      // At once: not after the rest of the pages already fetched.
      expect(ids).toEqual(nestedOrder(server.conversations).slice(0, 5))
      await expectAbortedAndQuiet(server)
    })
    expect(rejections).toEqual([])
  })
})

describe('an error surfaces in order, after every message before it', () => {
  const sizes = [6, 3, 12, 8, 9, 4]
  const limit = 5

  const cases: {
    name: string
    fails: (request: PageRequest) => boolean
    status: number
    /** A request after the failing one that must have been answered before the first page is let through. */
    later: (request: PageRequest) => boolean
    type: new (...args: never[]) => Error
    /** Messages before the failing page, in nested-loop order. */
    before: number
  }[] = [
    {
      name: '500 on page 2 of conversation 2',
      fails: (r) => isPage(r, 'c002', 2),
      status: 500,
      later: (r) => isPage(r, 'c002', 3),
      type: InternalServerError,
      before: 6 + 3 + 5,
    },
    {
      name: '400 on page 1 of conversation 3',
      fails: (r) => isPage(r, 'c003', 1),
      status: 400,
      later: (r) => isPage(r, 'c004', 1),
      type: BadRequestError,
      before: 6 + 3 + 12,
    },
  ]

  it.each(cases)('$name, even when later pages already arrived', async ({ fails, status, later, type, before }) => {
    const { server, client } = await serve(sizes, { maxRetries: 0 })
    // The first page waits until the failing page and a later one have been answered.
    const arrived = Promise.all([answered(server, fails), answered(server, later)])
    server.decide((request) => (fails(request) ? { status } : isPage(request, 'c000', 1) ? { hold: arrived } : undefined))
    const { ids, error } = await drain(client.conversations.messages.listAll({ limit, concurrency: 8 }))
    expect(error).toBeInstanceOf(type)
    expect(ids).toEqual(nestedOrder(server.conversations).slice(0, before))
    expect(server.requests.some((r) => later(r) && r.answered)).toBe(true)
  })

  it('500 on page 2 of the conversation list: after every message of the first 100 conversations', async () => {
    const { server, client } = await serve(
      Array.from({ length: 150 }, () => 1),
      { maxRetries: 0 },
    )
    const second = (r: PageRequest): boolean => r.kind === 'conversations' && r.page === 2
    const arrived = answered(server, second)
    server.decide((request) => (second(request) ? { status: 500 } : isPage(request, 'c000', 1) ? { hold: arrived } : undefined))
    const { ids, error } = await drain(client.conversations.messages.listAll({ limit, concurrency: 8 }))
    expect(error).toBeInstanceOf(InternalServerError)
    expect(ids).toEqual(nestedOrder(server.conversations).slice(0, 100))
  })
})

describe('a conversation that vanishes (404 on its messages)', () => {
  it('is skipped out loud: the run goes on, skipped lists it, a warn line is logged without secrets, total drops', async () => {
    const logger = recordingLogger()
    const sizes = [6, 12, 3, 7, 4]
    const { server, client } = await serve(sizes, { logger })
    const original = server.conversations.map((c) => ({ id: c.id, messages: [...c.messages] }))
    // c001 vanishes after its first page was read (a scripted 404); c003 is deleted once the conversation list went out.
    server.decide((request) =>
      request.kind === 'messages' && request.conversationId === 'c001' && request.page >= 2 ? { status: 404 } : undefined,
    )
    let deleted = false
    server.onAnswered((request) => {
      if (request.kind === 'conversations' && !deleted) {
        deleted = true
        server.conversations.splice(3, 1)
      }
    })
    const all = client.conversations.messages.listAll({ limit: 5, concurrency: 4 })
    const totals: (number | undefined)[] = []
    const { ids, error } = await drain(all, () => totals.push(all.progress.total))
    expect(error).toBeUndefined()

    const expected = original.flatMap((c) => (c.id === 'c001' ? c.messages.slice(0, 5) : c.id === 'c003' ? [] : c.messages))
    expect(ids).toEqual(expected)
    expect(all.skipped.map(({ parent, yielded }) => ({ id: parent.id, yielded }))).toEqual([
      { id: 'c001', yielded: 5 },
      { id: 'c003', yielded: 0 },
    ])
    for (const { error: notFound } of all.skipped) {
      expect(notFound).toBeInstanceOf(NotFoundError)
      expect(notFound.status).toBe(404)
    }

    const warnings = logger.messages('warn')
    expect(warnings).toHaveLength(2)
    expect(warnings[0]).toMatch(/c001 vanished \(404\).*7 remaining messages/)
    expect(warnings[1]).toMatch(/c003 vanished \(404\).*7 remaining messages/)
    expect(JSON.stringify(logger.calls)).not.toContain(KEY.keySecret)

    // The sum of message_count (32) until a skip, then less the skipped messages: 32 − 7 − 7.
    expect(totals[0]).toBe(32)
    expect(all.progress).toEqual({ done: 18, total: 18 })
    expect(totals.at(-1)).toBe(18)
  })
})
