// Nothing missed while the data changes (issue 28): every listing of a whole list yields each item
// that exists for the whole run exactly once, whatever the fake inserts and deletes while it is
// read (fake.moveList, listen mode): plain iteration, .pages(), prefetch, listAll (and its shards),
// listNew (and its checkpoints), inside a conversation, and a list that never holds still.
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import {
  ChatServiceClient,
  UnstableListError,
  type CustomerUser,
  type Message,
  type MessagesCheckpoint,
  type resources,
} from 'chat-service-sdk'
import { createFakeChatService, type FakeChatService, type FakeSeed, type ListMove } from 'chat-service-sdk/testing'
import { COMPANY_ID, KEY, conversationId, seedOf } from '../helpers/list-all-data.ts'
import { recordingLogger } from '../helpers/loopback.ts'

const open: { close: () => Promise<void> }[] = []
afterEach(async () => {
  for (const item of open.splice(0)) await item.close()
})

/** A company with `users` customer users and conversations of `sizes` messages, served in listen mode. */
async function serve(
  sizes: readonly number[],
  users = 0,
): Promise<{ fake: FakeChatService; client: ChatServiceClient; logger: ReturnType<typeof recordingLogger> }> {
  const seed = seedOf(sizes) as FakeSeed & { companies: [{ customerUsers: unknown[] }] }
  const company = seed.companies[0]
  company.customerUsers = Array.from({ length: users }, (_, i) => ({
    id: `cu_${String(i).padStart(4, '0')}`,
    external_id: `ext_${String(i).padStart(4, '0')}`,
    name: `User ${i}`,
    email: `user${i}@example.com`,
    metadata: {},
    active: true,
    created_at: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    last_seen_at: '2024-06-01T00:00:00.000Z',
  }))
  const fake = createFakeChatService({ seed })
  const server = await fake.listen()
  const logger = recordingLogger()
  const client = new ChatServiceClient({ baseUrl: server.url, ...KEY, logger })
  open.push({ close: () => client.close() }, server)
  return { fake, client, logger }
}

const userIds = (fake: FakeChatService): string[] => fake.listCustomerUsers(COMPANY_ID).map((u) => u.id)
const messageIds = (fake: FakeChatService): string[] =>
  fake.listConversations(COMPANY_ID).flatMap((c) => fake.listMessages(COMPANY_ID, c.id).map((m) => m.id))

/** The ids that were there before the run and still are after it: each must come exactly once. */
function survivors(before: readonly string[], after: readonly string[]): string[] {
  const now = new Set(after)
  return before.filter((id) => now.has(id))
}

/** Checks the exactly-once promise: no id twice, every survivor there. */
function expectExactlyOnce(ids: readonly string[], before: readonly string[], after: readonly string[]): void {
  expect(ids.length - new Set(ids).size).toBe(0)
  const got = new Set(ids)
  expect(survivors(before, after).filter((id) => !got.has(id))).toEqual([])
}

async function collect<T extends { id: string }>(items: AsyncIterable<T>): Promise<string[]> {
  const ids: string[] = []
  for await (const item of items) ids.push(item.id)
  return ids
}

async function collectPages(pages: AsyncIterable<{ data: readonly { id: string }[] }>): Promise<string[]> {
  const ids: string[] = []
  for await (const page of pages) for (const item of page.data) ids.push(item.id)
  return ids
}

const ways = [
  ['for await', (c: ChatServiceClient) => collect(c.customerUsers.list({ limit: 5 }))],
  ['.pages()', (c: ChatServiceClient) => collectPages(c.customerUsers.list({ limit: 5 }).pages())],
  ['prefetch 3', (c: ChatServiceClient) => collect(c.customerUsers.list({ limit: 5 }, { prefetch: 3 }))],
] as const

describe('plain iteration of a list that moves', () => {
  it.each(ways)('%s: 2 users deleted at the front while page 2 is asked: every surviving user once', async (_way, run) => {
    const { fake, client } = await serve([1], 40)
    const before = userIds(fake)
    fake.moveList({ list: 'customerUsers', when: { page: 2 }, delete: { at: 'front', count: 2 } })
    const ids = await run(client)
    expectExactlyOnce(ids, before, userIds(fake))
    expect(ids).toContain(before[5]) // the two that slipped back onto page 1
    expect(ids).toContain(before[6])
  })

  it.each(ways)('%s: a user inserted at the front while page 2 is asked: no user twice', async (_way, run) => {
    const { fake, client } = await serve([1], 23)
    const before = userIds(fake)
    fake.moveList({ list: 'customerUsers', when: { page: 2 }, insert: { at: 'front' } })
    const ids = await run(client)
    expectExactlyOnce(ids, before, userIds(fake))
  })

  it.each(ways)('%s: deletes at random positions on every third request: every surviving user once', async (_way, run) => {
    const { fake, client } = await serve([1], 60)
    const before = userIds(fake)
    fake.moveList({ list: 'customerUsers', when: { every: 3 }, delete: { at: 'random', count: 2 }, insert: { at: 'random' }, seed: 5 })
    const ids = await run(client)
    expectExactlyOnce(ids, before, userIds(fake))
  })

  it('repairs cost a request each, are logged once at warn, and a list that held still costs nothing more', async () => {
    const { fake, client, logger } = await serve([1], 40)
    await collect(client.customerUsers.list({ limit: 5 }))
    expect(fake.requests).toHaveLength(8)
    expect(logger.messages('warn')).toEqual([])
    fake.clearRequests()
    fake.moveList({ list: 'customerUsers', when: { page: 4 }, delete: { at: 'front', count: 3 } })
    await collect(client.customerUsers.list({ limit: 5 }))
    // Page 4 disagreed with page 3 on total: page 3 read again (it held the users that slipped back), then page 4 as fetched.
    expect(fake.requests.map((r) => r.query['page'])).toEqual(['1', '2', '3', '4', '3', '5', '6', '7', '8'])
    expect(logger.messages('warn')).toEqual([
      expect.stringContaining(
        'customerUsers.list: the list moved while it was read (1 time): 1 page read again so that every item came once; 3 items found',
      ),
    ])
  })

  it('a delete before and an insert after the page being read keep total: { rescan: true } finds what a single scan moved past', async () => {
    const { fake, client } = await serve([1], 40)
    const before = userIds(fake)
    const move: ListMove = { list: 'customerUsers', when: { page: 3 }, delete: { at: 'front' }, insert: { at: 'end' } }
    fake.moveList(move)
    const single = await collect(client.customerUsers.list({ limit: 5 }))
    // One scan cannot see it: the user that slipped onto page 2 is missing (which is why the option exists).
    expect(survivors(before, userIds(fake)).filter((id) => !single.includes(id))).toEqual([before[10]])

    fake.reset()
    fake.moveList(move)
    const ids = await collect(client.customerUsers.list({ limit: 5 }, { rescan: true }))
    expectExactlyOnce(ids, before, userIds(fake))
    // The second scan costs one request per page: 8, then 8 again.
    expect(fake.requests).toHaveLength(16)
  })

  it('a user that slipped back unseen (total kept), then stood before a repair’s first listed user: the second scan yields it', async () => {
    // [1 2 3][4 5 6][7 8 9]...: before page 2, user 2 goes and one comes at the end, so 4 slips onto
    // page 1 unseen; before page 3, users 1, 3 and 7 go: the repair walks back to page 1, now
    // [4 5 6], where 4 stands before 5, the first user listed. It used to be taken as listed there
    // without being yielded, so the second scan passed it over too.
    const { fake, client } = await serve([1], 15)
    const before = userIds(fake)
    fake.moveList({ list: 'customerUsers', when: { page: 2 }, delete: { at: 1 }, insert: { at: 'end' } })
    fake.moveList({ list: 'customerUsers', when: { page: 3 }, delete: { at: 0, count: 2 } })
    fake.moveList({ list: 'customerUsers', when: { page: 3 }, delete: { at: 3 } })
    const ids = await collect(client.customerUsers.list({ limit: 3 }, { rescan: true }))
    expect(ids).toContain(before[3])
    expectExactlyOnce(ids, before, userIds(fake))
  })

  it('a list that never holds still ends with UnstableListError, bounded, every item yielded once', async () => {
    const { fake, client } = await serve([1], 300)
    fake.moveList({ list: 'customerUsers', when: { every: 1 }, delete: { at: 'front' } })
    const ids: string[] = []
    const error = await (async () => {
      for await (const user of client.customerUsers.list({ limit: 10 })) ids.push(user.id)
    })().then(
      () => undefined,
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(UnstableListError)
    expect(error).toMatchObject({ operation: 'customerUsers.list', retryable: true })
    expect(new Set(ids).size).toBe(ids.length)
    expect(fake.requests.length).toBeLessThan(40)
  })
})

describe('findByExternalId reads the whole filtered list once', () => {
  /**
   * A service whose external_id filter matches partially (the spec does not say): 'ext-1' lists
   * 'ext-1', 'ext-10', ..., 250 users, the exact one at the top of page 2. Once page 1 went out,
   * `deleted` users at the front are deleted.
   */
  async function partialFilter(deleted: number): Promise<{ client: ChatServiceClient; requests: () => number }> {
    let users = Array.from({ length: 250 }, (_, i) => (i === 100 ? 'ext-1' : `ext-1${String(i).padStart(3, '0')}`))
    let requests = 0
    const server = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        requests++
        const page = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('page') ?? '1')
        const data = users.slice((page - 1) * 100, page * 100).map((external, i) => ({
          id: `cu-${external}`,
          external_id: external,
          name: null,
          email: null,
          metadata: {},
          active: true,
          created_at: new Date(Date.UTC(2024, 0, 1) + ((page - 1) * 100 + i) * 1000).toISOString(),
          last_seen_at: '2024-06-01T00:00:00.000Z',
        }))
        const body = JSON.stringify({
          data,
          pagination: { page, limit: 100, total: users.length, total_pages: Math.ceil(users.length / 100) },
        })
        if (requests === 1) users = users.slice(deleted)
        res.writeHead(200, { 'content-type': 'application/json' }).end(body)
      })
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const { port } = server.address() as AddressInfo
    const client = new ChatServiceClient({ baseUrl: `http://127.0.0.1:${port}`, ...KEY })
    open.push(
      { close: () => client.close() },
      {
        close: () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections()
            server.close(() => {
              resolve()
            })
          }),
      },
    )
    return { client, requests: () => requests }
  }

  it('a user at the top of page 2 that slips back onto page 1 is found, not "no such user"', async () => {
    const { client, requests } = await partialFilter(2)
    const found = await client.customerUsers.findByExternalId('ext-1')
    expect(found?.id).toBe('cu-ext-1')
    expect(requests()).toBe(4) // pages 1, 2, page 1 again (it holds the users that slipped back), 3
  })

  it('the list held still: one request per page, nothing more', async () => {
    const { client, requests } = await partialFilter(0)
    expect((await client.customerUsers.findByExternalId('ext-1'))?.id).toBe('cu-ext-1')
    expect(requests()).toBe(3)
  })
})

describe('listAll over a conversation list that moves', () => {
  const sizes = Array.from({ length: 250 }, (_, i) => 1 + (i % 4))

  it('3 conversations deleted at the front during the scan: every surviving conversation’s messages once', async () => {
    const { fake, client } = await serve(sizes)
    const before = messageIds(fake)
    fake.moveList({ list: 'conversations', when: { page: 2 }, delete: { at: 'front', count: 3 } })
    const all = client.conversations.messages.listAll({ concurrency: 4 })
    const ids = await collect(all)
    expectExactlyOnce(ids, before, messageIds(fake))
    expect(all.repairs.conversations).toMatchObject({ scans: 2, shifts: 1, rereads: 1, recovered: 3 })
  })

  it('2 deleted at the front and 2 created at the end (total unchanged): the second scan finds the one missed', async () => {
    const { fake, client } = await serve(sizes)
    const before = messageIds(fake)
    fake.moveList({ list: 'conversations', when: { page: 2 }, delete: { at: 'front', count: 2 }, insert: { at: 'end', count: 2 } })
    const all = client.conversations.messages.listAll({ concurrency: 4 })
    const ids = await collect(all)
    expectExactlyOnce(ids, before, messageIds(fake))
    expect(all.repairs.conversations).toMatchObject({ scans: 2, shifts: 0, recovered: 2 })
    // Without the second scan the two that slipped back are missing: what the default protects against.
    fake.reset()
    fake.moveList({ list: 'conversations', when: { page: 2 }, delete: { at: 'front', count: 2 }, insert: { at: 'end', count: 2 } })
    const single = await collect(client.conversations.messages.listAll({ concurrency: 4, rescan: false }))
    expect(survivors(before, messageIds(fake)).filter((id) => !single.includes(id)).length).toBeGreaterThan(0)
  })

  it('a cursor taken in a conversation only the second scan found resumes in it, with no gap and no repeat', async () => {
    const { fake, client } = await serve(sizes)
    const before = messageIds(fake)
    fake.moveList({ list: 'conversations', when: { page: 2 }, delete: { at: 'front', count: 2 }, insert: { at: 'end', count: 2 } })
    // The whole run, to know which messages come from the conversations the second scan found (the last ones).
    const whole = client.conversations.messages.listAll({ concurrency: 4 })
    const all = await collect(whole)
    expect(whole.repairs.conversations.recovered).toBe(2)
    const foundFrom = all.findIndex((id) => id.startsWith('conv_0100_'))
    expect(foundFrom).toBeGreaterThan(0)

    fake.reset()
    fake.moveList({ list: 'conversations', when: { page: 2 }, delete: { at: 'front', count: 2 }, insert: { at: 'end', count: 2 } })
    const first = client.conversations.messages.listAll({ concurrency: 4 })
    const ids: string[] = []
    let cursor = ''
    for await (const message of first) {
      ids.push(message.id)
      if (ids.length === foundFrom + 1) {
        cursor = first.cursor()
        break
      }
    }
    const rest = client.conversations.messages.listAll({ cursor })
    ids.push(...(await collect(rest)))
    expectExactlyOnce(ids, before, messageIds(fake))
    expect(rest.progress.done).toBe(ids.length)
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[]
    expect(decoded[0]).toBe(3) // the format that carries the found conversations
    // Every other cursor keeps the format 0.3 reads.
    const plain = client.conversations.messages.listAll({ concurrency: 4 })
    for await (const _ of plain) break
    expect((JSON.parse(Buffer.from(plain.cursor(), 'base64url').toString('utf8')) as unknown[])[0]).toBe(2)
  })

  it('with shards: each shard exact, the shards together every surviving message once', async () => {
    const { fake, client } = await serve(sizes)
    const before = messageIds(fake)
    const ids: string[] = []
    for (let index = 0; index < 3; index++) {
      fake.moveList({ list: 'conversations', when: { page: 2 }, delete: { at: 'front', count: 4 }, insert: { at: 'random' }, seed: index })
      ids.push(...(await collect(client.conversations.messages.listAll({ shard: { index, count: 3 }, concurrency: 3 }))))
    }
    expectExactlyOnce(ids, before, messageIds(fake))
  })

  it('a message deleted in a 150-message conversation after its first page was read: its 101st message is not lost', async () => {
    const { fake, client } = await serve([3, 150, 2])
    const before = messageIds(fake)
    const id = conversationId(1)
    fake.moveList({ list: 'messages', conversationId: id, when: { page: 2 }, delete: { at: 4 } })
    const all = client.conversations.messages.listAll({ limit: 100 })
    const ids = await collect(all)
    expectExactlyOnce(ids, before, messageIds(fake))
    expect(all.repairs.messages).toMatchObject({ shifts: 1, recovered: 1 })
  })
})

describe('a conversation that grows while its messages are read', () => {
  // A message deleted before the reader while one is added at the end keeps `total`: no two pages
  // disagree, so only the dates show it. Messages are oldest first (spec, Endpoint 6): one added
  // during the read is dated then, and such a conversation is read a second time.
  const slip = (fake: FakeChatService, id: string): void => {
    fake.moveList({ list: 'messages', conversationId: id, when: { page: 2 }, delete: { at: 0 }, insert: { at: 'end' } })
  }

  it.each([1, 8])(
    'listAll, concurrency %i: the message that slipped onto page 1 comes once, after the others, and is reported',
    async (concurrency) => {
      const { fake, client, logger } = await serve([3, 188, 2])
      const before = messageIds(fake)
      const id = conversationId(1)
      const slipped = fake.listMessages(COMPANY_ID, id)[100]?.id
      slip(fake, id)
      const all = client.conversations.messages.listAll({ limit: 100, concurrency })
      const ids = await collect(all)
      expectExactlyOnce(ids, before, messageIds(fake))
      expect(ids).toContain(slipped)
      expect(all.repairs.messages).toMatchObject({ scans: 2, shifts: 0, recovered: 1 })
      // The second pass's find comes after the conversation's other messages, before the next conversation's.
      const mine = fake.listMessages(COMPANY_ID, id).map((m) => m.id)
      expect(ids.filter((m) => mine.includes(m)).at(-1)).toBe(slipped)
      expect(logger.messages('warn')).toEqual([expect.stringContaining('1 item found that a plain reading would have missed')])
    },
  )

  it('a conversation that grew is read a second time, nothing repeated; one whose messages are old costs no request more', async () => {
    const { fake, client } = await serve([3, 188, 150])
    fake.moveList({ list: 'messages', conversationId: conversationId(1), when: { page: 2 }, insert: { at: 'end', count: 2 } })
    const before = messageIds(fake)
    const all = client.conversations.messages.listAll({ limit: 100 })
    const ids = await collect(all)
    expectExactlyOnce(ids, before, messageIds(fake))
    expect(ids).toHaveLength(3 + 190 + 150)
    const pagesOf = (n: number): number => fake.requests.filter((r) => r.path.endsWith(`${conversationId(n)}/messages`)).length
    // The old ones: their pages once. The grown one: its 2 pages, what repaired the shift its growth
    // showed (page 1 again, and page 2 when it had been fetched ahead), then both again.
    expect([pagesOf(0), pagesOf(2)]).toEqual([1, 2])
    expect(pagesOf(1)).toBeGreaterThanOrEqual(2 + 1 + 2)
    expect(all.repairs.messages).toMatchObject({ scans: 2, recovered: 0 })
  })

  it('listNew: night 1 writes the slipped message, nights 2 and 3 nothing again', async () => {
    const { fake, client } = await serve([3, 188, 2])
    const before = messageIds(fake)
    const id = conversationId(1)
    slip(fake, id)
    const first = client.conversations.messages.listNew({})
    const ids = await collect(first)
    expectExactlyOnce(ids, before, messageIds(fake))
    expect(first.summary?.repairs.messages).toMatchObject({ scans: 2, recovered: 1 })
    const second = client.conversations.messages.listNew({ checkpoint: first.checkpoint() })
    expect(await collect(second)).toEqual([])
    const third = client.conversations.messages.listNew({ checkpoint: second.checkpoint() })
    expect(await collect(third)).toEqual([])
  })

  it('stopped as its last page is yielded, during its second pass or after, and resumed: none lost; only that conversation repeats', async () => {
    // 2 messages, then 12 at 5 a page (13 yielded by the first pass, the one that slipped by the
    // second), then 2. A checkpoint or cursor taken once the first pass has read the last page
    // resumes the conversation where this run began reading it until the second pass ends (its
    // messages may come again, never one lost). One taken before then cannot know (docs/paging.md).
    for (const kind of ['listNew', 'listAll'] as const) {
      for (let stop = 13; stop <= 17; stop++) {
        const { fake, client } = await serve([2, 12, 2])
        const before = messageIds(fake)
        const mine = new Set(fake.listMessages(COMPANY_ID, conversationId(1)).map((m) => m.id))
        fake.moveList({ list: 'messages', conversationId: conversationId(1), when: { page: 2 }, delete: { at: 0 }, insert: { at: 'end' } })
        const got: string[] = []
        let resumed: AsyncIterable<Message>
        if (kind === 'listNew') {
          const run = client.conversations.messages.listNew({ limit: 5 })
          for await (const message of run) if (got.push(message.id) >= stop) break
          resumed = client.conversations.messages.listNew({ limit: 5, checkpoint: run.checkpoint() })
        } else {
          const run = client.conversations.messages.listAll({ limit: 5 })
          for await (const message of run) if (got.push(message.id) >= stop) break
          resumed = client.conversations.messages.listAll({ limit: 5, cursor: run.cursor() })
        }
        for await (const message of resumed) got.push(message.id)
        for (const m of fake.listMessages(COMPANY_ID, conversationId(1))) mine.add(m.id)
        const now = new Set(got)
        const label = `${kind}, stopped after ${stop}`
        expect(
          survivors(before, messageIds(fake)).filter((m) => !now.has(m)),
          label,
        ).toEqual([])
        const repeated = got.filter((id, i) => got.indexOf(id) !== i)
        expect(
          repeated.filter((id) => !mine.has(id)),
          label,
        ).toEqual([])
        // Stopped in the next conversation (16, 17): the grown one had ended, and nothing repeats.
        if (stop >= 16) expect(repeated, label).toEqual([])
      }
    }
  })

  it('listNew: a grown conversation read a second time and stopped then repeats what that night yielded, not earlier nights', async () => {
    const { fake, client } = await serve([2, 12, 2])
    const id = conversationId(1)
    const night1 = client.conversations.messages.listNew({ limit: 5 })
    const first = await collect(night1)
    fake.appendMessages(COMPANY_ID, id, 6) // dated now: night 2 reads it from page 3, then again
    const night2 = client.conversations.messages.listNew({ limit: 5, checkpoint: night1.checkpoint() })
    const second: string[] = []
    // Its last page (page 4) is accepted, and its second pass decided, before its first message is yielded.
    for await (const message of night2) if (second.push(message.id) >= 4) break
    const third = await collect(client.conversations.messages.listNew({ limit: 5, checkpoint: night2.checkpoint() }))
    expect(third.filter((m) => first.includes(m))).toEqual([])
    expect(new Set([...second, ...third])).toEqual(
      new Set(
        fake
          .listMessages(COMPANY_ID, id)
          .slice(12)
          .map((m) => m.id),
      ),
    )
  })

  it('listAll: a cursor taken once a conversation read a second time has ended resumes after it', async () => {
    const { fake, client } = await serve([2, 12])
    fake.moveList({ list: 'messages', conversationId: conversationId(1), when: { page: 2 }, delete: { at: 0 }, insert: { at: 'end' } })
    const all = client.conversations.messages.listAll({ limit: 5 })
    await collect(all)
    expect(all.repairs.messages).toMatchObject({ scans: 2, recovered: 1 })
    expect(await collect(client.conversations.messages.listAll({ limit: 5, cursor: all.cursor() }))).toEqual([])
  })
})

describe('listAll: shift upon shift inside one conversation (found by the property test)', () => {
  it('a page that showed a shift, then was set aside for a newer shift, is asked for again, never waited for forever', async () => {
    const sizes = Array.from({ length: 130 }, (_, i) => (i * 7) % 4)
    const { fake, client } = await serve(sizes)
    const before = messageIds(fake)
    // conv_0001 (3 messages, 1 a page): page 3 moves the list, and so does every reading of page 2 while page 3 waits.
    fake.moveList({ list: 'conversations', when: { page: 2 }, insert: { at: 'front', count: 3 }, seed: 874557024 })
    fake.moveList({ list: 'messages', when: { page: 2 }, insert: { at: 'front', count: 2 }, times: 5, seed: 1001820771 })
    fake.moveList({ list: 'messages', when: { page: 3 }, insert: { at: 'random', count: 2 }, times: 1, seed: 1850594601 })
    const ids = await collect(client.conversations.messages.listAll({ limit: 1, concurrency: 1 }))
    expectExactlyOnce(ids, before, messageIds(fake))
  })
})

describe('listNew while the data moves', () => {
  async function night(
    client: ChatServiceClient,
    checkpoint: MessagesCheckpoint | undefined,
    extra: { shard?: { index: number; count: number }; limit?: number } = {},
  ) {
    const run: resources.NewMessages = client.conversations.messages.listNew({
      ...(checkpoint === undefined ? {} : { checkpoint }),
      ...extra,
    })
    const ids = await collect(run)
    return { run, ids, checkpoint: run.checkpoint() }
  }

  it('a message deleted in a 150-message conversation after page 1: night 1 writes its 101st, nights 2 and 3 nothing', async () => {
    const { fake, client } = await serve([3, 150, 2])
    const before = messageIds(fake)
    const id = conversationId(1)
    fake.moveList({ list: 'messages', conversationId: id, when: { page: 2 }, delete: { at: 4 } })
    const first = await night(client, undefined)
    expectExactlyOnce(first.ids, before, messageIds(fake))
    // The checkpoint records the conversation as read to its last message, where it now is.
    const at = first.checkpoint.conversations.indexOf(id)
    expect(first.checkpoint.read[at]).toBe(149)
    expect(first.checkpoint.lastMessageIds[at]).toBe(fake.listMessages(COMPANY_ID, id).at(-1)?.id)
    const second = await night(client, first.checkpoint)
    expect(second.ids).toEqual([])
    const third = await night(client, second.checkpoint)
    expect(third.ids).toEqual([])
    expect(third.run.summary).toMatchObject({ new: 0, grown: 0, rewound: [] })
  })

  it('conversations deleted at the front during the scan: nothing new is missed, and only deleted ones are reported deleted', async () => {
    const sizes = Array.from({ length: 250 }, () => 2)
    const { fake, client } = await serve(sizes)
    const first = await night(client, undefined)
    for (const conversation of fake.listConversations(COMPANY_ID)) fake.appendMessages(COMPANY_ID, conversation.id, 1)
    const before = messageIds(fake)
    const gone = fake
      .listConversations(COMPANY_ID)
      .slice(0, 3)
      .map((c) => c.id)
    fake.moveList({ list: 'conversations', when: { page: 2 }, delete: { at: 'front', count: 3 } })
    const second = await night(client, first.checkpoint)
    const written = new Set([...first.ids, ...second.ids])
    expect(survivors(before, messageIds(fake)).filter((id) => !written.has(id))).toEqual([])
    // The scan listed the three before they went (their new messages may have been read first): a
    // conversation is reported deleted when no scan listed it, or its messages answered 404; the
    // others go the next night.
    const third = await night(client, second.checkpoint)
    expect(third.ids).toEqual([])
    expect([...second.run.summary!.deleted, ...third.run.summary!.deleted].sort()).toEqual(gone)
    expect(second.run.summary).toMatchObject({ scans: 2, complete: true })
    // The summary says the list moved and how it was repaired.
    expect(second.run.summary?.repairs.conversations).toMatchObject({ scans: 2, shifts: 1, recovered: 3 })
  })

  it('with shards, conversations and messages moving: the shards write every surviving message once across two nights', async () => {
    const sizes = Array.from({ length: 250 }, (_, i) => 3 + (i % 4))
    const { fake, client } = await serve(sizes)
    const before = messageIds(fake)
    const ids: string[] = []
    const checkpoints: MessagesCheckpoint[] = []
    for (let index = 0; index < 2; index++) {
      // A delete at the front and an insert at the end keep `total`: one scan cannot see the shift.
      fake.moveList({ list: 'conversations', when: { every: 2 }, delete: { at: 'front' }, insert: { at: 'end' }, times: 2, seed: index })
      // A message deleted before the second page of a conversation (2 messages a page) is read.
      fake.moveList({ list: 'messages', when: { page: 2 }, delete: { at: 0 }, times: 20 })
      const run = await night(client, undefined, { shard: { index, count: 2 }, limit: 2 })
      ids.push(...run.ids)
      checkpoints.push(run.checkpoint)
    }
    // A conversation moved past on the first night is not in its checkpoint: the next night reads it as new.
    for (let index = 0; index < 2; index++)
      ids.push(...(await night(client, checkpoints[index], { shard: { index, count: 2 }, limit: 2 })).ids)
    expectExactlyOnce(ids, before, messageIds(fake))
  })
})

describe('de-duplication holds ids, not items', () => {
  it('a page of users already yielded is not kept: the items of a long iteration can be collected', async () => {
    const { client } = await serve([1], 400)
    const refs: WeakRef<CustomerUser>[] = []
    const { runInNewContext } = await import('node:vm')
    const { setFlagsFromString } = await import('node:v8')
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    let alive = -1
    let seen = 0
    for await (const user of client.customerUsers.list({ limit: 20 })) {
      seen++
      if (seen <= 300) refs.push(new WeakRef(user))
      if (seen === 380) {
        gc()
        await new Promise((resolve) => setImmediate(resolve))
        gc()
        alive = refs.filter((ref) => ref.deref() !== undefined).length
      }
    }
    // Only the users of the first page (the iteration keeps the page it started from) may be alive.
    expect(alive).toBeGreaterThanOrEqual(0)
    expect(alive).toBeLessThanOrEqual(20)
  })
})

describe('the testing kit moves a list for messages too', () => {
  it('a message inserted at the front of a conversation while page 2 is read is yielded or not, but nothing else is lost', async () => {
    const { fake, client } = await serve([120])
    const before = messageIds(fake)
    fake.moveList({ list: 'messages', when: { page: 2 }, insert: { at: 'front', count: 3 } })
    const ids = await collect(client.conversations.messages.list(conversationId(0), { limit: 50 }) as AsyncIterable<Message>)
    expectExactlyOnce(ids, before, messageIds(fake))
  })
})
