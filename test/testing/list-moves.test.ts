// Lists that move while they are read (issue 28's testing kit): fake.moveList deletes and inserts
// records at the front, the end, at random or at an index, when page p is asked or on every k-th
// request of a list, in listen mode (raw HTTP), in msw mode and through POST /__fake/list-moves.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ChatServiceClient } from 'chat-service-sdk'
import {
  createFakeChatService,
  generateDataset,
  type AgentRecord,
  type ConversationRecord,
  type FakeChatService,
  type FakeServerHandle,
  type MessageRecord,
} from 'chat-service-sdk/testing'
import { createFakeHandlers, createMswNetwork } from 'chat-service-sdk/testing/msw'
import { call, type ErrorBody, type ListBody, type MessagesBody } from './helpers.ts'

const seed = generateDataset({ seed: 3, agents: 12, customerUsers: 30, conversations: 25, messages: 200 })
const company = seed.companies[0]!
const key = company.keys[0]!
let fake: FakeChatService
let server: FakeServerHandle

beforeAll(async () => {
  fake = createFakeChatService({ seed })
  server = await fake.listen()
})
afterAll(() => server.close())
beforeEach(() => {
  fake.reset()
})

const page = async <T>(path: string, n: number, limit = 10) => {
  const res = await call<ListBody<T>>(server.url, 'GET', `/rest/v1/${path}?page=${n}&limit=${limit}`, { body: key })
  expect(res.status).toBe(200)
  return res.json
}
const ids = (records: readonly { id: string }[]) => records.map((r) => r.id)

describe('fake.moveList', () => {
  it('deletes at the front when page p is asked, once: the later records move up', async () => {
    const before = ids(fake.listConversations(company.id))
    const move = fake.moveList({ list: 'conversations', when: { page: 2 }, delete: { at: 'front', count: 3 } })
    expect(ids((await page<ConversationRecord>('conversations', 1)).data)).toEqual(before.slice(0, 10))
    expect(move.fired).toBe(0)
    const second = await page<ConversationRecord>('conversations', 2)
    expect(move.fired).toBe(1)
    expect(second.pagination.total).toBe(before.length - 3)
    expect(ids(second.data)).toEqual(before.slice(13, 23)) // 10..12 moved onto page 1: a reader misses them
    await page('conversations', 2)
    expect(move.fired).toBe(1) // { page } fires once unless `times` says more
  })

  it('inserts at the end and deletes at the front on every k-th request: the total stays, the list shifts', async () => {
    const before = ids(fake.listAgents(company.id))
    const move = fake.moveList({ list: 'agents', when: { every: 2 }, delete: { at: 'front' }, insert: { at: 'end' }, times: 2 })
    await page('agents', 1, 5)
    const second = await page<AgentRecord>('agents', 2, 5)
    expect(second.pagination.total).toBe(before.length)
    expect(ids(second.data)).toEqual(before.slice(6, 11))
    await page('agents', 1, 5)
    await page('agents', 1, 5)
    await page('agents', 1, 5)
    await page('agents', 1, 5)
    expect(move.fired).toBe(2)
    const after = fake.listAgents(company.id)
    expect(ids(after).slice(0, before.length - 2)).toEqual(before.slice(2))
    expect(after.slice(-2).map((agent) => agent.id)).toEqual(['agent_fake_000001', 'agent_fake_000002'])
  })

  it('inserts at the front and at an index, where asked, with generated records', async () => {
    const before = ids(fake.listCustomerUsers(company.id))
    fake.moveList({ list: 'customerUsers', when: { page: 1 }, insert: { at: 'front', count: 2 } })
    fake.moveList({ list: 'customerUsers', when: { page: 1 }, insert: { at: 7 } })
    const first = await page<{ id: string; external_id: string }>('customer-users', 1)
    expect(first.pagination.total).toBe(before.length + 3)
    const listed = ids(fake.listCustomerUsers(company.id))
    expect(listed.filter((id) => !before.includes(id))).toEqual([listed[0], listed[1], listed[7]])
    expect(listed.filter((id) => before.includes(id))).toEqual(before)
    expect(first.data[0]?.external_id).toMatch(/^ext_fake_/)
  })

  it('deletes and inserts at random positions, reproducibly for a seed', async () => {
    const run = async (): Promise<string[]> => {
      fake.reset()
      fake.moveList({
        list: 'conversations',
        when: { page: 1 },
        delete: { at: 'random', count: 4 },
        insert: { at: 'random', count: 4 },
        seed: 7,
      })
      await page('conversations', 1)
      return ids(fake.listConversations(company.id))
    }
    const first = await run()
    expect(await run()).toEqual(first)
    const original = ids(company.conversations!)
    expect(first).toHaveLength(original.length)
    expect(first.filter((id) => !original.includes(id))).toHaveLength(4)
    // Still in list order: the inserted records took their places by created_at.
    const listed = fake.listConversations(company.id)
    const sorted = [...listed].sort((a, b) => a.created_at.localeCompare(b.created_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    expect(ids(listed)).toEqual(ids(sorted))
  })

  it("moves one conversation's messages, as deleteMessage and appendMessages do (count and updated_at)", async () => {
    const conversation = fake.listConversations(company.id).find((c) => c.message_count >= 12) as ConversationRecord
    const messages = ids(fake.listMessages(company.id, conversation.id))
    fake.moveList({
      list: 'messages',
      conversationId: conversation.id,
      when: { page: 2 },
      delete: { at: 'front' },
      insert: { at: 'front' },
    })
    const path = `conversations/${encodeURIComponent(conversation.id)}/messages`
    await page(path, 1, 5)
    const second = (await page<MessageRecord>(path, 2, 5)) as unknown as MessagesBody<MessageRecord>
    expect(second.pagination.total).toBe(messages.length)
    const now = fake.listMessages(company.id, conversation.id)
    expect(now[0]?.id).toBe('msg_fake_000001') // back-dated before the first
    expect(ids(now).slice(1)).toEqual(messages.slice(1))
    const listed = fake.listConversations(company.id).find((c) => c.id === conversation.id) as ConversationRecord
    expect(listed.updated_at > conversation.updated_at).toBe(true)
  })

  it('refuses a malformed move, naming the problem, and adds nothing', () => {
    expect(() => fake.moveList({ list: 'users' as never, when: { page: 1 }, delete: { at: 'front' } })).toThrow(/list must be one of/)
    expect(() => fake.moveList({ list: 'agents', when: { page: 0 }, delete: { at: 'front' } })).toThrow(/when must be/)
    expect(() => fake.moveList({ list: 'agents', when: { every: 1 } })).toThrow(/needs delete, insert or both/)
    expect(() => fake.moveList({ list: 'agents', when: { every: 1 }, insert: { at: 'middle' as never } })).toThrow(/insert.at must be/)
    expect(() => fake.moveList({ list: 'agents', when: { every: 1 }, insert: { at: 'end', count: 0 } })).toThrow(/count must be/)
    expect(() => fake.moveList({ list: 'agents', when: { every: 1 }, insert: { at: 'end' }, conversationId: 'c' })).toThrow(
      /only for list 'messages'/,
    )
  })

  it('clearListMoves() and a handle’s cancel() stop moves', async () => {
    const total = fake.listAgents(company.id).length
    const move = fake.moveList({ list: 'agents', when: { every: 1 }, delete: { at: 'end' } })
    await page('agents', 1)
    move.cancel()
    await page('agents', 1)
    fake.moveList({ list: 'agents', when: { every: 1 }, delete: { at: 'end' } })
    fake.clearListMoves()
    await page('agents', 1)
    expect(fake.listAgents(company.id)).toHaveLength(total - 1)
  })
})

describe('POST /__fake/list-moves', () => {
  it('schedules a move (the same JSON as moveList), and DELETE removes every one', async () => {
    const before = ids(fake.listConversations(company.id))
    const res = await call(server.url, 'POST', '/__fake/list-moves', {
      body: { list: 'conversations', when: { page: 2 }, delete: { at: 'front', count: 2 } },
    })
    expect(res.status).toBe(200)
    expect((await page<ConversationRecord>('conversations', 2)).pagination.total).toBe(before.length - 2)
    await call(server.url, 'POST', '/__fake/list-moves', { body: { list: 'conversations', when: { every: 1 }, delete: { at: 'front' } } })
    expect((await call(server.url, 'DELETE', '/__fake/list-moves')).status).toBe(204)
    expect((await page<ConversationRecord>('conversations', 1)).pagination.total).toBe(before.length - 2)
  })

  it('answers 400 naming the problem for a malformed move', async () => {
    const res = await call<ErrorBody>(server.url, 'POST', '/__fake/list-moves', {
      body: { list: 'conversations', when: { page: 1 }, delete: { at: -1 } },
    })
    expect(res.status).toBe(400)
    expect(res.json.error.message).toContain("delete.at must be 'front', 'end', 'random' or an index")
    const unknown = await call<ErrorBody>(server.url, 'POST', '/__fake/list-moves', {
      body: { list: 'agents', when: { page: 1 }, remove: {} },
    })
    expect(unknown.status).toBe(400)
    expect(unknown.json.error.message).toContain('unknown member "remove"')
  })
})

describe('msw mode', () => {
  it('moves the list the SDK reads through msw, as listen mode does', async () => {
    const network = createMswNetwork(createFakeHandlers(fake, 'https://moving.test'))
    network.enable()
    const client = new ChatServiceClient({ baseUrl: 'https://moving.test', keyId: key.keyId, keySecret: key.keySecret, logLevel: 'off' })
    try {
      const before = ids(fake.listConversations(company.id))
      const move = fake.moveList({ list: 'conversations', when: { page: 2 }, delete: { at: 'front', count: 2 } })
      const first = await client.conversations.list({ limit: 10 })
      const second = await first.getNextPage()
      expect(move.fired).toBe(1)
      expect(second.pagination.total).toBe(before.length - 2)
      expect(ids(second.data)).toEqual(before.slice(12, 22))
    } finally {
      await client.close()
      network.disable()
    }
  })
})
