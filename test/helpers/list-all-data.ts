/**
 * Hand-written company seeds for the fake service with exactly the conversation sizes a
 * `listAll` test needs, and the reference every `listAll` result is compared with: the nested
 * loop over the public API, run against the same server.
 */
import type { ChatServiceClient } from 'chat-service-sdk'
import type { CompanySeed, FakeSeed, MessageRecord } from 'chat-service-sdk/testing'

export const COMPANY_ID = 'comp_listall'
export const KEY = { keyId: 'key_listall', keySecret: 'sk_listall_Zq81vW3nR5tY' } as const

const BASE = Date.UTC(2024, 0, 1)

/** The id of conversation `i` of a {@link seedOf} company (list order is id order there). */
export function conversationId(i: number): string {
  return `conv_${String(i).padStart(4, '0')}`
}

/** A message of conversation `conversation`, at second `second` of the day (list order follows it). */
export function messageRecord(conversation: string, index: number, second = index): MessageRecord {
  return {
    id: `${conversation}_msg_${String(index).padStart(5, '0')}`,
    content: `message ${index} of ${conversation}`,
    role: index % 2 === 0 ? 'user' : 'assistant',
    conversation_id: conversation,
    created_at: new Date(BASE + 3_600_000 + second * 1000).toISOString(),
  }
}

/** One company whose conversation `i` holds `sizes[i]` messages, listed in index order. */
export function seedOf(sizes: readonly number[]): FakeSeed {
  const company: CompanySeed = {
    id: COMPANY_ID,
    keys: [{ ...KEY }],
    customerUsers: [
      {
        id: 'cu_1',
        external_id: 'ext_1',
        name: 'Ada',
        email: 'ada@example.com',
        metadata: {},
        active: true,
        created_at: '2024-01-01T00:00:00.000Z',
        last_seen_at: '2024-01-02T00:00:00.000Z',
      },
    ],
    conversations: sizes.map((_, i) => ({
      id: conversationId(i),
      title: `Conversation ${i}`,
      customer_user_id: 'cu_1',
      created_at: new Date(BASE + i * 1000).toISOString(),
      updated_at: new Date(BASE + i * 1000).toISOString(),
    })),
    messages: sizes.flatMap((size, i) => Array.from({ length: size }, (_, m) => messageRecord(conversationId(i), m))),
  }
  return { companies: [company] }
}

/** Message ids of the whole company in the order of the nested loop the spec's paging rule gives. */
export async function nestedLoop(client: ChatServiceClient, limit: number): Promise<string[]> {
  const ids: string[] = []
  for await (const conversation of client.conversations.list({ limit: 100 })) {
    for await (const message of client.conversations.messages.list(conversation.id, { limit })) ids.push(message.id)
  }
  return ids
}

/** Collects the ids an async iterable of messages yields. */
export async function idsOf(messages: AsyncIterable<{ id: string }>): Promise<string[]> {
  const ids: string[] = []
  for await (const message of messages) ids.push(message.id)
  return ids
}
