// Data that changes between runs (issue 21): appendMessages, deleteMessage, deleteConversation,
// seen at the wire (raw HTTP in listen mode) and through the accessors.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  createFakeChatService,
  generateDataset,
  type ConversationRecord,
  type FakeChatService,
  type FakeServerHandle,
  type MessageRecord,
  type MessageSeed,
} from '../../src/testing/index.ts'
import { call, fixtureSeed, KEY_A, type ErrorBody, type ListBody, type MessagesBody } from './helpers.ts'

// A frozen clock EARLIER than every seeded timestamp: generated times must still come after the
// existing messages, and updated_at must still move forward.
let clock = new Date(Date.UTC(2020, 0, 1))
let fake: FakeChatService
let server: FakeServerHandle

beforeAll(async () => {
  fake = createFakeChatService({ seed: fixtureSeed(), now: () => clock })
  server = await fake.listen()
})
afterAll(() => server.close())
beforeEach(() => {
  clock = new Date(Date.UTC(2020, 0, 1))
  fake.reset()
})

const messagesOf = async (conversationId: string, query = '?limit=100') => {
  const res = await call<MessagesBody<MessageRecord>>(
    server.url,
    'GET',
    `/rest/v1/conversations/${encodeURIComponent(conversationId)}/messages${query}`,
    {
      body: KEY_A,
    },
  )
  expect(res.status).toBe(200)
  return res.json
}
const conversationsAtWire = async () => {
  const res = await call<ListBody<ConversationRecord>>(server.url, 'GET', '/rest/v1/conversations?limit=100', { body: KEY_A })
  expect(res.status).toBe(200)
  return res.json
}
const conversation = async (id: string): Promise<ConversationRecord> => {
  const found = (await conversationsAtWire()).data.find((c) => c.id === id)
  if (found === undefined) throw new Error(`conversation ${id} is not listed`)
  return found
}

describe('appendMessages(companyId, conversationId, count)', () => {
  it('appends generated messages after the existing ones and bumps message_count and updated_at', async () => {
    const before = await conversation('conv_1')
    const held = (await messagesOf('conv_1')).data
    expect(before.message_count).toBe(4)

    const appended = fake.appendMessages('co_a', 'conv_1', 3)

    const newest = Date.parse(held.at(-1)!.created_at)
    expect(appended).toEqual([
      {
        id: 'msg_fake_000001',
        content: 'Appended message msg_fake_000001',
        role: 'assistant',
        conversation_id: 'conv_1',
        created_at: new Date(newest + 1).toISOString(),
      },
      {
        id: 'msg_fake_000002',
        content: 'Appended message msg_fake_000002',
        role: 'user',
        conversation_id: 'conv_1',
        created_at: new Date(newest + 2).toISOString(),
      },
      {
        id: 'msg_fake_000003',
        content: 'Appended message msg_fake_000003',
        role: 'assistant',
        conversation_id: 'conv_1',
        created_at: new Date(newest + 3).toISOString(),
      },
    ])
    const page = await messagesOf('conv_1')
    expect(page.data).toEqual([...held, ...appended])
    expect(page.pagination).toEqual({ page: 1, limit: 100, total: 7, total_pages: 1 })
    // The page that holds message k (k = what a reader had) starts with the first new one.
    expect((await messagesOf('conv_1', '?page=2&limit=4')).data.map((m) => m.id)).toEqual([
      'msg_fake_000001',
      'msg_fake_000002',
      'msg_fake_000003',
    ])

    const after = await conversation('conv_1')
    expect(after.message_count).toBe(7)
    expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(before.updated_at))
    expect(Date.parse(after.updated_at)).toBeGreaterThanOrEqual(newest + 3) // never before its newest message
    expect(fake.listConversations('co_a').find((c) => c.id === 'conv_1')).toEqual(after)
    expect(fake.listMessages('co_a', 'conv_1')).toEqual(page.data)
  })

  it('uses the clock when it is later than the newest message, and updated_at strictly increases even with it frozen', async () => {
    clock = new Date('2030-06-01T12:00:00.000Z')
    const first = fake.appendMessages('co_a', 'conv_1', 1)
    const second = fake.appendMessages('co_a', 'conv_1', 2)
    expect(first[0]!.created_at).toBe('2030-06-01T12:00:00.000Z')
    // Same frozen clock: each generated message 1 ms after the newest, so list order = append order.
    expect(second.map((m) => m.created_at)).toEqual(['2030-06-01T12:00:00.001Z', '2030-06-01T12:00:00.002Z'])
    const stamps: string[] = []
    for (let i = 0; i < 3; i++) {
      fake.appendMessages('co_a', 'conv_1', 1)
      stamps.push((await conversation('conv_1')).updated_at)
    }
    expect(new Set(stamps).size).toBe(3)
    expect([...stamps].sort()).toEqual(stamps)
    expect((await messagesOf('conv_1')).data.slice(4).map((m) => m.id)).toEqual([
      'msg_fake_000001',
      'msg_fake_000002',
      'msg_fake_000003',
      'msg_fake_000004',
      'msg_fake_000005',
      'msg_fake_000006',
    ])
  })

  it('starts with a user message in an empty conversation, and alternates after the newest role', async () => {
    fake.seed({
      companies: [
        {
          id: 'co_a',
          keys: [],
          conversations: [
            {
              id: 'conv_new',
              title: 'New',
              customer_user_id: 'u_1',
              created_at: '2024-02-01T00:00:00.000Z',
              updated_at: '2024-02-01T00:00:00.000Z',
            },
          ],
        },
      ],
    })
    expect(fake.appendMessages('co_a', 'conv_new', 3).map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect((await conversation('conv_new')).message_count).toBe(3)
  })

  it('a count of 0 (or no seeds) changes nothing', async () => {
    const before = await conversation('conv_1')
    expect(fake.appendMessages('co_a', 'conv_1', 0)).toEqual([])
    expect(fake.appendMessages('co_a', 'conv_1', [])).toEqual([])
    expect(await conversation('conv_1')).toEqual(before)
  })
})

describe('appendMessages(companyId, conversationId, seeds)', () => {
  it('keeps the given fields, generates the omitted ones, and sorts each into list order', async () => {
    const seeds: MessageSeed[] = [
      { content: 'later reply', role: 'assistant' },
      { id: 'm_given', content: 'given id', role: 'user', conversation_id: 'conv_1' },
      // back-dated: before every existing message of conv_1 (T(101) is its first)
      { id: 'm_backdated', content: 'imported late', role: 'user', created_at: '2024-01-01T01:00:00.000Z' },
    ]
    const appended = fake.appendMessages('co_a', 'conv_1', seeds)
    expect(appended.map((m) => [m.id, m.content, m.role])).toEqual([
      ['msg_fake_000001', 'later reply', 'assistant'],
      ['m_given', 'given id', 'user'],
      ['m_backdated', 'imported late', 'user'],
    ])
    expect(appended.every((m) => m.conversation_id === 'conv_1')).toBe(true)
    const ids = (await messagesOf('conv_1')).data.map((m) => m.id)
    expect(ids).toEqual(['m_backdated', 'm_first', 'm_a', 'm_b', 'm_c', 'msg_fake_000001', 'm_given'])
    expect((await conversation('conv_1')).message_count).toBe(7)
  })

  it('skips ids in use when generating, and refuses a given id already used in the company', async () => {
    fake.appendMessages('co_a', 'conv_1', [{ id: 'msg_fake_000001', content: 'x', role: 'user' }])
    expect(fake.appendMessages('co_a', 'conv_1', 1)[0]!.id).toBe('msg_fake_000002')
    // m_odd belongs to another conversation of the same company: ids are unique in the company.
    expect(() => fake.appendMessages('co_a', 'conv_1', [{ id: 'm_odd', content: 'x', role: 'user' }])).toThrow(
      'chat-service-sdk/testing: appendMessages: messages[0].id m_odd is already a message of the company',
    )
    expect(() =>
      fake.appendMessages('co_a', 'conv_1', [
        { id: 'dup', content: 'x', role: 'user' },
        { id: 'dup', content: 'y', role: 'user' },
      ]),
    ).toThrow('messages[1].id dup is already a message of the company')
    // Another company may use the same id.
    expect(fake.appendMessages('co_b', 'conv_b', [{ id: 'm_odd', content: 'x', role: 'user' }])[0]!.id).toBe('m_odd')
  })

  it('refuses malformed seeds with a clear error, and then appends none of them', async () => {
    const before = await messagesOf('conv_1')
    const beforeConversation = await conversation('conv_1')
    const bad: [unknown, string][] = [
      [
        [
          { content: 'ok', role: 'user' },
          { content: 'x', role: 'system' },
        ],
        "messages[1].role must be 'user' or 'assistant'",
      ],
      [[{ role: 'user' }], 'messages[0].content must be a string'],
      [
        [{ content: 'x', role: 'user', conversation_id: 'conv_b' }],
        'messages[0].conversation_id must be conv_1 (the conversation appended to) when given',
      ],
      [[{ content: 'x', role: 'user', created_at: 'yesterday' }], 'messages[0].created_at must be an ISO 8601 date-time'],
      [[{ content: 'x', role: 'user', created_at: '2024-13-45T00:00:00Z' }], 'messages[0].created_at must be an ISO 8601 date-time'],
      [[{ content: 'x', role: 'user', id: '' }], 'messages[0].id must be a non-empty string when given'],
      [[null], 'messages[0] must be an object'],
      [-1, 'a count of messages must be an integer from 0 to 1000000'],
      [1.5, 'a count of messages must be an integer from 0 to 1000000'],
      ['3', 'messages must be a count or an array of MessageSeed'],
    ]
    for (const [messages, message] of bad) {
      expect(() => fake.appendMessages('co_a', 'conv_1', messages as MessageSeed[]), JSON.stringify(messages)).toThrow(message)
    }
    expect(await messagesOf('conv_1')).toEqual(before)
    expect(await conversation('conv_1')).toEqual(beforeConversation)
    expect(fake.appendMessages('co_a', 'conv_1', 1)[0]!.id).toBe('msg_fake_000001') // no id was used up
  })
})

describe('deleteMessage', () => {
  it('removes the message: message_count drops, updated_at moves forward, later messages move up', async () => {
    const before = await conversation('conv_1')
    fake.deleteMessage('co_a', 'conv_1', 'm_a')
    const page = await messagesOf('conv_1', '?limit=2')
    expect(page.data.map((m) => m.id)).toEqual(['m_first', 'm_b'])
    expect(page.pagination).toEqual({ page: 1, limit: 2, total: 3, total_pages: 2 })
    const after = await conversation('conv_1')
    expect(after.message_count).toBe(3)
    expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(before.updated_at))
    expect(fake.listMessages('co_a', 'conv_1').map((m) => m.id)).toEqual(['m_first', 'm_b', 'm_c'])
    // Its id is free again.
    expect(fake.appendMessages('co_a', 'conv_1', [{ id: 'm_a', content: 'again', role: 'user' }])[0]!.id).toBe('m_a')
  })

  it('deleting every message leaves a count of 0, not the count the conversation was seeded with', async () => {
    // conv_1 was seeded with message_count 99 and four messages: the messages are the truth.
    for (const id of ['m_first', 'm_a', 'm_b', 'm_c']) fake.deleteMessage('co_a', 'conv_1', id)
    expect((await conversation('conv_1')).message_count).toBe(0)
    expect((await messagesOf('conv_1')).pagination.total).toBe(0)
    expect(fake.appendMessages('co_a', 'conv_1', 1)[0]!.role).toBe('user')
  })

  it('throws for an unknown company, conversation or message, and for a message of another conversation', () => {
    expect(() => {
      fake.deleteMessage('co_x', 'conv_1', 'm_a')
    }).toThrow('chat-service-sdk/testing: deleteMessage: unknown company co_x (the fake has co_a, co_b, co_empty)')
    expect(() => {
      fake.deleteMessage('co_a', 'conv_x', 'm_a')
    }).toThrow('deleteMessage: unknown conversation conv_x in company co_a')
    expect(() => {
      fake.deleteMessage('co_a', 'conv_1', 'm_x')
    }).toThrow('deleteMessage: unknown message m_x in conversation conv_1 of company co_a')
    expect(() => {
      fake.deleteMessage('co_a', 'conv_1', 'm_odd')
    }).toThrow('unknown message m_odd in conversation conv_1')
    // Company scoping: co_b's conversation is not co_a's.
    expect(() => {
      fake.deleteMessage('co_a', 'conv_b', 'm_b1')
    }).toThrow('unknown conversation conv_b in company co_a')
    expect(fake.listMessages('co_a', 'conv_1')).toHaveLength(4)
  })
})

describe('deleteConversation', () => {
  it('removes the conversation and its messages: the list closes up, its messages endpoint answers 404', async () => {
    const before = await conversationsAtWire()
    expect(before.data.map((c) => c.id)).toEqual(['conv_1', 'conv_declared', 'conv/2 ü'])
    fake.deleteConversation('co_a', 'conv_1')
    const after = await conversationsAtWire()
    expect(after.data.map((c) => c.id)).toEqual(['conv_declared', 'conv/2 ü'])
    expect(after.pagination.total).toBe(2)
    const gone = await call<ErrorBody>(server.url, 'GET', '/rest/v1/conversations/conv_1/messages', { body: KEY_A })
    expect(gone.status).toBe(404)
    expect(fake.listMessages('co_a', 'conv_1')).toEqual([])
    expect(fake.listConversations('co_a').map((c) => c.id)).toEqual(['conv_declared', 'conv/2 ü'])
    // Its message ids are free again.
    expect(fake.appendMessages('co_a', 'conv/2 ü', [{ id: 'm_first', content: 'x', role: 'user' }])).toHaveLength(1)
  })

  it('throws for an unknown company or conversation, and for another company’s conversation', () => {
    expect(() => {
      fake.deleteConversation('nope', 'conv_1')
    }).toThrow('deleteConversation: unknown company nope')
    expect(() => {
      fake.deleteConversation('co_a', 'conv_1x')
    }).toThrow('deleteConversation: unknown conversation conv_1x in company co_a')
    expect(() => {
      fake.deleteConversation('co_a', 'conv_b')
    }).toThrow('unknown conversation conv_b in company co_a')
    expect(fake.listConversations('co_b')).toHaveLength(1)
  })
})

describe('changes and the rest of the fake', () => {
  it('refuses to append to a conversation seeded with a message_count but without its messages', () => {
    expect(() => fake.appendMessages('co_a', 'conv_declared', 1)).toThrow(
      'conversation conv_declared in company co_a was seeded with message_count 7 but without its messages',
    )
  })

  it('appendMessages throws for an unknown company or conversation', () => {
    expect(() => fake.appendMessages('co_x', 'conv_1', 1)).toThrow('appendMessages: unknown company co_x')
    expect(() => fake.appendMessages('co_a', 'conv_b', 1)).toThrow('appendMessages: unknown conversation conv_b in company co_a')
  })

  it('reset() undoes every change and restarts the generated ids', async () => {
    const seeded = await conversationsAtWire()
    fake.appendMessages('co_a', 'conv_1', 2)
    fake.deleteMessage('co_a', 'conv/2 ü', 'm_odd')
    fake.deleteConversation('co_a', 'conv_declared')
    fake.reset()
    expect(await conversationsAtWire()).toEqual(seeded)
    expect(fake.listMessages('co_a', 'conv/2 ü').map((m) => m.id)).toEqual(['m_odd'])
    expect(fake.appendMessages('co_a', 'conv_1', 1)[0]!.id).toBe('msg_fake_000001')
  })

  it('re-seeding an existing company adds to it (a way to add conversations between runs); duplicates throw and change nothing', async () => {
    fake.seed({
      companies: [
        {
          id: 'co_a',
          keys: [],
          conversations: [
            {
              id: 'conv_0',
              title: 'Earliest',
              customer_user_id: 'u_1',
              created_at: '2023-12-31T00:00:00.000Z',
              updated_at: '2023-12-31T00:00:00.000Z',
            },
          ],
          messages: [{ id: 'm_0', content: 'hi', role: 'user', conversation_id: 'conv_0', created_at: '2023-12-31T00:00:01.000Z' }],
        },
      ],
    })
    expect((await conversationsAtWire()).data.map((c) => [c.id, c.message_count])).toEqual([
      ['conv_0', 1],
      ['conv_1', 4],
      ['conv_declared', 7],
      ['conv/2 ü', 1],
    ])
    expect(() => {
      fake.seed({
        companies: [
          {
            id: 'co_a',
            keys: [],
            conversations: [
              {
                id: 'conv_9',
                title: 't',
                customer_user_id: 'u_1',
                created_at: '2024-05-01T00:00:00.000Z',
                updated_at: '2024-05-01T00:00:00.000Z',
              },
              {
                id: 'conv_1',
                title: 'dup',
                customer_user_id: 'u_1',
                created_at: '2024-05-01T00:00:00.000Z',
                updated_at: '2024-05-01T00:00:00.000Z',
              },
            ],
          },
        ],
      })
    }).toThrow('duplicate conversation id conv_1 in company co_a')
    expect(fake.listConversations('co_a').map((c) => c.id)).not.toContain('conv_9')
  })

  it('appends to a generated company of 100,000 messages with ids unique in the company', () => {
    const big = createFakeChatService({ seed: generateDataset({ seed: 3, conversations: 1000, messages: 100_000 }) })
    const [first] = big.listConversations('comp_1')
    const appended = big.appendMessages('comp_1', first!.id, 1000)
    expect(new Set(appended.map((m) => m.id)).size).toBe(1000)
    expect(big.listConversations('comp_1')[0]!.message_count).toBe(first!.message_count + 1000)
    expect(() => big.appendMessages('comp_1', first!.id, [{ id: 'msg_0000001', content: 'x', role: 'user' }])).toThrow(
      'already a message of the company',
    )
  })
})
