// conversations.messages.listAll against the fake service (listen mode): order equals the nested
// loop, progress without extra requests, cursor() and resuming (and refusing stale or malformed
// cursors), single iteration, and the caller's AbortSignal. The wire-level behaviours (requests in
// flight, bounded memory, early break, error order, vanished conversations) are in
// list-all-wire.test.ts against a server the tests control.
import { afterEach, describe, expect, it } from 'vitest'
import { APIError, APIUserAbortError, ChatServiceClient, ChatServiceError, RequestValidationError, type Message } from 'chat-service-sdk'
import {
  createFakeChatService,
  generateDataset,
  type FakeChatService,
  type FakeSeed,
  type FakeServerHandle,
} from 'chat-service-sdk/testing'
import { COMPANY_ID, conversationId, idsOf, KEY, messageRecord, nestedLoop, seedOf } from '../helpers/list-all-data.ts'

interface Setup {
  fake: FakeChatService
  client: ChatServiceClient
}

const open: { server: FakeServerHandle; client: ChatServiceClient }[] = []

afterEach(async () => {
  for (const { server, client } of open.splice(0)) {
    await client.close()
    await server.close()
  }
})

async function serve(seed: FakeSeed, keys: { keyId: string; keySecret: string } = KEY): Promise<Setup> {
  const fake = createFakeChatService({ seed })
  const server = await fake.listen()
  const client = new ChatServiceClient({ baseUrl: server.url, ...keys })
  open.push({ server, client })
  return { fake, client }
}

/** Message requests and conversation-list requests the fake has received. */
function counts(fake: FakeChatService): { conversations: number; messages: number } {
  const paths = fake.requests.map((request) => request.path)
  return {
    conversations: paths.filter((path) => path === '/rest/v1/conversations').length,
    messages: paths.filter((path) => path.endsWith('/messages')).length,
  }
}

/** Iterates until `n` messages were yielded, then takes the cursor and leaves the loop. */
async function cursorAfter(client: ChatServiceClient, n: number, params: { limit?: number; cursor?: string } = {}) {
  const all = client.conversations.messages.listAll(params)
  const ids: string[] = []
  if (n > 0) {
    for await (const message of all) {
      ids.push(message.id)
      if (ids.length === n) break
    }
  }
  return { ids, cursor: all.cursor(), done: all.progress.done }
}

/** Iterates a resumed listAll to the end, recording progress.done at each message. */
async function resume(client: ChatServiceClient, cursor: string, limit?: number) {
  const all = client.conversations.messages.listAll(limit === undefined ? { cursor } : { cursor, limit })
  const ids: string[] = []
  const dones: number[] = []
  for await (const message of all) {
    ids.push(message.id)
    dones.push(all.progress.done)
  }
  return { ids, dones, progress: all.progress }
}

describe('order equals the nested loop', () => {
  const head = [400, 2, 3, 1, 0, 5, 4, 0, 9]
  const middle = [2, 3, 1, 0, 400, 0, 5, 4, 9]
  // 250 conversations (three conversation pages) of 0 to 5 messages, one of 150 in the middle.
  const many = Array.from({ length: 250 }, (_, i) => (i === 140 ? 150 : (i * 7) % 6))
  const datasets: Record<string, number[]> = {
    'empty conversations (message_count 0) between others': [0, 3, 0, 0, 12, 0, 1, 0],
    'exact page multiples at every limit (200 at 100, 14 and 21 at 7)': [200, 100, 14, 21, 7, 1, 0],
    'one conversation far larger than the rest, at the head': head,
    'one conversation far larger than the rest, in the middle': middle,
    'more than 100 conversations (three conversation pages)': many,
  }
  const limits = [1, 7, 100]
  const concurrencies = [1, 3, 8, 32]
  const cases = Object.entries(datasets).flatMap(([name, sizes], d) =>
    limits.map((limit, l) => ({ name, sizes, limit, concurrency: concurrencies[(d + l) % concurrencies.length] as number })),
  )

  it.each(cases)('$name, limit $limit, concurrency $concurrency', async ({ sizes, limit, concurrency }) => {
    const { client } = await serve(seedOf(sizes))
    // The nested loop read at 100 a page: what it yields does not depend on its page size (the paging
    // tests show that), and at `limit` 1 it cost as many requests again as listAll itself.
    const expected = await nestedLoop(client, 100)
    expect(expected).toHaveLength(sizes.reduce((sum, size) => sum + size, 0))
    expect(await idsOf(client.conversations.messages.listAll({ limit, concurrency }))).toEqual(expected)
  })

  it('on a generated dataset (uneven sizes, several companies), with the default limit and concurrency', async () => {
    const seed = generateDataset({ seed: 11, companies: 2, conversations: 180, messages: 4000 })
    const key = seed.companies[1]?.keys[0]
    if (key === undefined) throw new Error('no key')
    const { client } = await serve(seed, key)
    const expected = await nestedLoop(client, 100)
    expect(expected.length).toBeGreaterThan(3000)
    expect(await idsOf(client.conversations.messages.listAll())).toEqual(expected)
  })

  it('yields nothing for a company without conversations, after one request', async () => {
    const { fake, client } = await serve(seedOf([]))
    const all = client.conversations.messages.listAll()
    expect(await idsOf(all)).toEqual([])
    expect(counts(fake)).toEqual({ conversations: 1, messages: 0 })
    expect(all.progress).toEqual({ done: 0, total: 0 })
  })

  it('yields the Message objects conversations.messages.list returns', async () => {
    const { client } = await serve(seedOf([2, 1]))
    const all: Message[] = []
    for await (const message of client.conversations.messages.listAll()) all.push(message)
    const first = await client.conversations.messages.list(conversationId(0), { limit: 100 })
    expect(all.slice(0, 2)).toEqual(first.data)
  })
})

describe('progress', () => {
  it('done counts yielded messages; total is the sum of message_count, equals done at the end, and costs no request', async () => {
    const sizes = Array.from({ length: 230 }, (_, i) => (i * 5) % 9) // three conversation pages
    const limit = 4
    const { fake, client } = await serve(seedOf(sizes))
    const sum = sizes.reduce((a, b) => a + b, 0)
    const all = client.conversations.messages.listAll({ limit, concurrency: 6 })
    expect(all.progress).toEqual({ done: 0, total: undefined })
    const seen: { done: number; total: number | undefined }[] = []
    for await (const _ of all) seen.push(all.progress)
    expect(seen.map((p) => p.done)).toEqual(Array.from({ length: sum }, (_, i) => i + 1))
    // Unknown until every conversation page is read, then the sum, and it stays so.
    const known = seen.findIndex((p) => p.total !== undefined)
    expect(known).toBeGreaterThanOrEqual(0)
    expect(seen.slice(known).every((p) => p.total === sum)).toBe(true)
    expect(seen.slice(0, known).every((p) => p.total === undefined)).toBe(true)
    expect(all.progress).toEqual({ done: sum, total: sum })
    // The requests of the nested loop (every conversation page once, every message page once), and
    // the conversation list's second scan (3 pages: listAll's default against changes that keep `total`).
    const messagePages = sizes.reduce((n, size) => n + Math.max(1, Math.ceil(size / limit)), 0)
    expect(counts(fake)).toEqual({ conversations: 6, messages: messagePages })
    fake.clearRequests()
    await nestedLoop(client, limit)
    expect(counts(fake)).toEqual({ conversations: 3, messages: messagePages })
  })

  it('total is known from the first message when the conversations fit on one page', async () => {
    const sizes = [5, 0, 17, 3]
    const { client } = await serve(seedOf(sizes))
    const all = client.conversations.messages.listAll({ limit: 5 })
    for await (const _ of all) {
      expect(all.progress.total).toBe(25)
    }
    expect(all.progress).toEqual({ done: 25, total: 25 })
  })
})

describe('cursor() and resuming', () => {
  // limit 5: conversation 2 (12 messages) has pages 5, 5, 2; conversation 3 (10) is two full pages.
  const sizes = [3, 0, 12, 10, 0, 0, 7, 1, 25]
  const limit = 5
  /** Position in the nested-loop order of message `m` of conversation `c` (0-based). */
  const at = (c: number, m: number): number => sizes.slice(0, c).reduce((a, b) => a + b, 0) + m
  const positions: [string, number][] = [
    ['a mid-page message', at(2, 6)],
    ['a page boundary (last message of a page, more pages follow)', at(2, 4)],
    ['a conversation boundary mid-page (last message of a conversation of 12)', at(2, 11)],
    ['a conversation boundary on a page boundary, before empty conversations', at(3, 9)],
    ['the first message', at(0, 0)],
    ['the last message', at(8, 24)],
  ]

  it.each(positions)('resumes after %s with no gap and no duplicate, and done goes on', async (_, index) => {
    const { client } = await serve(seedOf(sizes))
    const expected = await nestedLoop(client, limit)
    const first = await cursorAfter(client, index + 1, { limit })
    expect(first.ids).toEqual(expected.slice(0, index + 1))
    expect(first.done).toBe(index + 1)
    const rest = await resume(client, first.cursor)
    expect([...first.ids, ...rest.ids]).toEqual(expected)
    expect(rest.dones).toEqual(Array.from({ length: expected.length - index - 1 }, (_, i) => index + 2 + i))
    expect(rest.progress).toEqual({ done: expected.length, total: expected.length })
  })

  it('resumes with the same limit given explicitly', async () => {
    const { client } = await serve(seedOf(sizes))
    const expected = await nestedLoop(client, limit)
    const first = await cursorAfter(client, 9, { limit })
    const rest = await resume(client, first.cursor, limit)
    expect([...first.ids, ...rest.ids]).toEqual(expected)
  })

  it('a cursor taken before anything was yielded resumes from the start', async () => {
    const { client } = await serve(seedOf(sizes))
    const expected = await nestedLoop(client, limit)
    const cursor = client.conversations.messages.listAll({ limit }).cursor()
    const all = await resume(client, cursor)
    expect(all.ids).toEqual(expected)
    expect(all.progress).toEqual({ done: expected.length, total: expected.length })
  })

  it("resumes twice: from a resumed iteration's own cursor, before and after it yielded", async () => {
    const { client } = await serve(seedOf(sizes))
    const expected = await nestedLoop(client, limit)
    const first = await cursorAfter(client, at(2, 3) + 1, { limit })
    // A resumed iteration's cursor taken before it yields resumes where it began.
    const untouched = await cursorAfter(client, 0, { cursor: first.cursor })
    expect(untouched.done).toBe(first.done)
    const second = await cursorAfter(client, 14, { cursor: untouched.cursor })
    expect(second.done).toBe(first.done + 14)
    const third = await resume(client, second.cursor)
    expect([...first.ids, ...second.ids, ...third.ids]).toEqual(expected)
    expect(third.progress).toEqual({ done: expected.length, total: expected.length })
  })

  it('resumes across conversation pages (more than 100 conversations)', async () => {
    const many = Array.from({ length: 230 }, (_, i) => 1 + (i % 3))
    const { client } = await serve(seedOf(many))
    const expected = await nestedLoop(client, 2)
    const lastOfPageOne = many.slice(0, 100).reduce((a, b) => a + b, 0) // after conversation 99
    let ids: string[] = []
    let cursor: string | undefined
    for (const n of [lastOfPageOne, 7, 150]) {
      const part = await cursorAfter(client, n, cursor === undefined ? { limit: 2 } : { cursor })
      ids = [...ids, ...part.ids]
      cursor = part.cursor
    }
    const rest = await resume(client, cursor as string)
    expect([...ids, ...rest.ids]).toEqual(expected)
  })

  it('follows a conversation that moved within its page of the conversation list', async () => {
    const { fake, client } = await serve(seedOf(sizes))
    const expected = await nestedLoop(client, limit)
    const first = await cursorAfter(client, at(3, 2) + 1, { limit })
    // A conversation created before the others: every conversation moves one place down.
    fake.seed({
      companies: [
        {
          id: COMPANY_ID,
          keys: [],
          conversations: [
            {
              id: 'conv_early',
              title: 'Early',
              customer_user_id: 'cu_1',
              created_at: '2023-01-01T00:00:00.000Z',
              updated_at: '2023-01-01T00:00:00.000Z',
            },
          ],
          messages: [messageRecord('conv_early', 0)],
        },
      ],
    })
    const rest = await resume(client, first.cursor)
    expect([...first.ids, ...rest.ids]).toEqual(expected)
  })

  describe('refuses a cursor that does not match the data any more', () => {
    it("when the cursor's conversation left its conversation page", async () => {
      const many = Array.from({ length: 120 }, () => 2)
      const { fake, client } = await serve(seedOf(many))
      const first = await cursorAfter(client, 99 * 2 + 1, { limit }) // mid conversation 99, the last of page 1
      fake.seed({
        companies: [
          {
            id: COMPANY_ID,
            keys: [],
            conversations: [
              {
                id: 'conv_early',
                title: 'Early',
                customer_user_id: 'cu_1',
                created_at: '2023-01-01T00:00:00.000Z',
                updated_at: '2023-01-01T00:00:00.000Z',
              },
            ],
          },
        ],
      })
      const all = client.conversations.messages.listAll({ cursor: first.cursor })
      const yielded: string[] = []
      const error = await (async () => {
        try {
          for await (const message of all) yielded.push(message.id)
        } catch (caught) {
          return caught
        }
        return undefined
      })()
      expect(error).toBeInstanceOf(ChatServiceError)
      expect(error).not.toBeInstanceOf(APIError)
      expect((error as Error).message).toMatch(/^Cannot resume from this cursor: conversation conv_0099 is no longer on page 1/)
      expect(yielded).toEqual([])
    })

    it("when the cursor's message left its page of messages", async () => {
      const { fake, client } = await serve(seedOf(sizes))
      const first = await cursorAfter(client, at(2, 4) + 1, { limit }) // the last message of page 1 of conversation 2
      fake.seed({
        companies: [{ id: COMPANY_ID, keys: [], messages: [{ ...messageRecord(conversationId(2), 99, -10), id: 'msg_early' }] }],
      })
      const all = client.conversations.messages.listAll({ cursor: first.cursor })
      const yielded: string[] = []
      const error = await (async () => {
        try {
          for await (const message of all) yielded.push(message.id)
        } catch (caught) {
          return caught
        }
        return undefined
      })()
      expect(error).toBeInstanceOf(ChatServiceError)
      expect(error).not.toBeInstanceOf(APIError)
      expect((error as Error).message).toMatch(/^Cannot resume from this cursor: message conv_0002_msg_00004 is no longer on page 1/)
      expect(yielded).toEqual([])
    })
  })

  describe('refuses a malformed cursor at once, sending nothing', () => {
    /** A genuine cursor (limit 5), made against another server so that none of its requests can reach the one under test. */
    const realCursor = async (): Promise<string> => (await cursorAfter((await serve(seedOf(sizes))).client, 8, { limit })).cursor
    const malformed: [string, (real: string) => string][] = [
      ['a random string', () => 'not-a-cursor!%'],
      ['valid base64url of other JSON', () => Buffer.from(JSON.stringify({ page: 3, limit: 5 })).toString('base64url')],
      [
        'valid base64url of a near miss (version 3, unknown)',
        (real) =>
          Buffer.from(JSON.stringify([3, ...(JSON.parse(Buffer.from(real, 'base64url').toString()) as unknown[]).slice(1)])).toString(
            'base64url',
          ),
      ],
      ['a truncated cursor', (real) => real.slice(0, -6)],
      ['an empty string', () => ''],
    ]
    it.each(malformed)('%s', async (_, make) => {
      const real = await realCursor()
      const { fake, client } = await serve(seedOf(sizes))
      let thrown: unknown
      try {
        client.conversations.messages.listAll({ cursor: make(real) })
      } catch (error) {
        thrown = error
      }
      expect(thrown).toBeInstanceOf(RequestValidationError)
      expect((thrown as RequestValidationError).message).toContain('cursor')
      await new Promise((resolve) => setTimeout(resolve, 20))
      expect(fake.requests).toHaveLength(0)
    })

    it('a cursor with another limit than the one given', async () => {
      const real = await realCursor()
      const { fake, client } = await serve(seedOf(sizes))
      expect(() => client.conversations.messages.listAll({ cursor: real, limit: 7 })).toThrow(RequestValidationError)
      expect(() => client.conversations.messages.listAll({ cursor: real, limit: 7 })).toThrow(/limit 5/)
      expect(fake.requests).toHaveLength(0)
    })
  })
})

describe('iterates once; the caller can abort', () => {
  it('a second iteration of the same object throws ChatServiceError, during the first and after it', async () => {
    const { client } = await serve(seedOf([3, 4]))
    const all = client.conversations.messages.listAll()
    const iterator = all[Symbol.asyncIterator]()
    await iterator.next()
    expect(() => all[Symbol.asyncIterator]()).toThrow(ChatServiceError)
    const rest: string[] = []
    for (let step = await iterator.next(); step.done !== true; step = await iterator.next()) rest.push(step.value.id)
    expect(rest).toHaveLength(6)
    await expect(idsOf(all)).rejects.toThrow(/iterates once/)
  })

  it('an aborted signal ends the iteration with APIUserAbortError', async () => {
    const { client } = await serve(seedOf(Array.from({ length: 40 }, () => 30)))
    const controller = new AbortController()
    const all = client.conversations.messages.listAll({ limit: 10 }, { signal: controller.signal })
    let yielded = 0
    const error = await (async () => {
      try {
        for await (const _ of all) {
          if (++yielded === 15) controller.abort()
        }
      } catch (caught) {
        return caught
      }
      return undefined
    })()
    expect(error).toBeInstanceOf(APIUserAbortError)
    // At once, although the pages after the 15th message had been fetched already.
    expect(yielded).toBe(15)
  })

  it('a signal aborted before the loop sends nothing and throws APIUserAbortError', async () => {
    const { fake, client } = await serve(seedOf([3]))
    const all = client.conversations.messages.listAll({}, { signal: AbortSignal.abort() })
    await expect(idsOf(all)).rejects.toBeInstanceOf(APIUserAbortError)
    expect(fake.requests).toHaveLength(0)
  })
})
