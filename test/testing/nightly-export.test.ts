// A nightly export across appended and deleted data (issue 21), as a user tests theirs: the job
// (listNew, lines, then the checkpoint, as the README's "Every night, only what is new") runs
// against the fake in listen mode, and between nights the fake's data changes as the service's
// would: messages appended (also back-dated), a message deleted, a conversation deleted, new
// conversations at the front and the end of the list. What each night writes is checked against
// the fake's own view of its data (a second reading of the spec), and so is what it costs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ChatServiceClient, type Message, type MessagesCheckpoint, type resources } from 'chat-service-sdk'
import { createFakeChatService, generateDataset, type FakeServerHandle } from 'chat-service-sdk/testing'

const COMPANY = 'comp_1'
const fake = createFakeChatService({ seed: generateDataset({ seed: 21, customerUsers: 5, conversations: 12, messages: 240 }) })
let server: FakeServerHandle
let client: ChatServiceClient

beforeAll(async () => {
  server = await fake.listen()
  client = new ChatServiceClient({ ...server.clientOptions(), logLevel: 'off' })
})
afterAll(async () => {
  await client.close()
  await server.close()
})

/** The job: every new message, then the checkpoint (kept as JSON, as a file would keep it). */
async function night(
  checkpoint: string | undefined,
): Promise<{ messages: Message[]; checkpoint: string; summary: resources.ListNewSummary; requests: number }> {
  const before = fake.requests.length
  const saved = checkpoint === undefined ? undefined : (JSON.parse(checkpoint) as MessagesCheckpoint)
  const changes = client.conversations.messages.listNew({ checkpoint: saved, limit: 10, concurrency: 4 })
  const messages: Message[] = []
  for await (const message of changes) messages.push(message)
  const summary = changes.summary
  if (summary === undefined) throw new Error('the scan did not complete')
  return { messages, checkpoint: JSON.stringify(changes.checkpoint()), summary, requests: fake.requests.length - before }
}

/** Every message of the company as the fake holds it, in the nested-loop order. */
const everything = (): Message[] => fake.listConversations(COMPANY).flatMap((c) => fake.listMessages(COMPANY, c.id))
const idsOf = (messages: readonly { id: string }[]): string[] => messages.map((m) => m.id)
const conversationIds = (): string[] => fake.listConversations(COMPANY).map((c) => c.id)

describe('a nightly export with listNew, across data that changes between nights', () => {
  it('writes every message once, then only what changed, and a quiet night costs exactly the scan', async () => {
    // Night 1: everything, in the nested-loop order.
    const first = await night(undefined)
    expect(first.messages).toEqual(everything())
    expect(first.summary).toMatchObject({ new: 12, grown: 0, unchanged: 0, rewound: [], deleted: [], complete: true })

    // The day: the service's data changes.
    const [grown, shrunk, deleted, backdated, , ...untouched] = conversationIds()
    const appended = fake.appendMessages(COMPANY, grown!, 3) // after what night 1 read
    const shrunkBefore = fake.listMessages(COMPANY, shrunk!)
    fake.deleteMessage(COMPANY, shrunk!, shrunkBefore[1]!.id) // fewer messages: read again
    fake.deleteConversation(COMPANY, deleted!)
    // A message that arrives late, dated before the last one night 1 read: it lands mid-list.
    const firstOfBackdated = fake.listMessages(COMPANY, backdated!)[0]!
    const late = new Date(Date.parse(firstOfBackdated.created_at) + 1).toISOString()
    fake.appendMessages(COMPANY, backdated!, [{ id: 'msg_late', content: 'sent while offline', role: 'user', created_at: late }])
    // New conversations at the front and at the end of the list (re-seeding adds to the company).
    const customer = fake.listCustomerUsers(COMPANY)[0]!.id
    fake.seed({
      companies: [
        {
          id: COMPANY,
          keys: [],
          conversations: [
            {
              id: 'conv_front',
              title: 'Imported',
              customer_user_id: customer,
              created_at: '2000-01-01T00:00:00.000Z',
              updated_at: '2000-01-01T00:00:00.000Z',
            },
            {
              id: 'conv_end',
              title: 'Tonight',
              customer_user_id: customer,
              created_at: '2099-01-01T00:00:00.000Z',
              updated_at: '2099-01-01T00:00:00.000Z',
            },
          ],
        },
      ],
    })
    fake.appendMessages(COMPANY, 'conv_front', 2)
    fake.appendMessages(COMPANY, 'conv_end', 1)
    expect(conversationIds()[0]).toBe('conv_front')
    expect(conversationIds().at(-1)).toBe('conv_end')

    // Night 2: only what changed, in the list's order; rewound conversations from their first message.
    const second = await night(first.checkpoint)
    const expected = ['conv_front', grown!, shrunk!, backdated!, 'conv_end'].flatMap((id) =>
      id === grown ? appended : fake.listMessages(COMPANY, id),
    )
    expect(idsOf(second.messages)).toEqual(idsOf(expected))
    expect(second.messages).toContainEqual(expect.objectContaining({ id: 'msg_late', conversation_id: backdated }))
    expect(second.summary).toMatchObject({ new: 2, grown: 1, unchanged: untouched.length + 1, deleted: [deleted], complete: true })
    expect([...second.summary.rewound].sort()).toEqual([shrunk!, backdated!].sort())
    // Nothing lost: every message the fake holds tonight was written on one night or the other.
    const written = new Set(idsOf([...first.messages, ...second.messages]))
    expect(idsOf(everything()).filter((id) => !written.has(id))).toEqual([])

    // Night 3: nothing new. It costs the scan and nothing else: ceil(13 / 100) = 1 request.
    const third = await night(second.checkpoint)
    expect(third.messages).toEqual([])
    expect(third.summary).toMatchObject({ new: 0, grown: 0, unchanged: 13, rewound: [], deleted: [] })
    expect(third.requests).toBe(1)
  })

  it('night 2 of a grown conversation asks only for the page that holds its new messages', async () => {
    const start = await night(undefined)
    // A conversation whose two new messages share the page of its last message read.
    const target = conversationIds().find((id) => [1, 2, 3, 4, 5, 6, 7].includes(fake.listMessages(COMPANY, id).length % 10))
    if (target === undefined) throw new Error('the dataset has no conversation to grow within a page')
    const held = fake.listMessages(COMPANY, target).length // read by the night before
    fake.appendMessages(COMPANY, target, 2)
    fake.clearRequests()
    const next = await night(start.checkpoint)
    expect(next.messages).toHaveLength(2)
    const reads = fake.requests.filter((r) => r.path.endsWith('/messages'))
    // The page of limit 10 that holds message `held` (1-based), the last one read: checked, then what follows.
    expect(reads.map((r) => r.query['page'])).toEqual([String(Math.ceil(held / 10))])
    expect(next.requests).toBe(2) // the scan and that page
  })
})
