// The export benchmark's data: the fake's generated dataset (chat-service-sdk/testing, built), its
// list pages rendered exactly as the fake renders them (checked byte for byte against the fake at
// start-up), and what a correct export must deliver.
import { createFakeChatService, generateDataset, type FakeChatService } from 'chat-service-sdk/testing'

export interface ExportDatasetOptions {
  conversations: number
  messages: number
}

/** What every contender's export must produce: messages in nested-loop order (ids strictly increase in it). */
export interface ExpectedExport {
  messages: number
  conversations: number
  firstId: string
  lastId: string
  /** Requests of a nested loop at limit 100: conversation-list pages + max(1, ceil(count / 100)) per conversation. */
  requestsAtLimit100: number
}

export interface ExportDataset {
  keyId: string
  keySecret: string
  expected: ExpectedExport
  /** The JSON body the fake would send for this service path + query (`/rest/v1/...?page=&limit=`), or an error. */
  render(pathname: string, query: URLSearchParams): { status: number; body: string }
  /** Every path a nested loop at limit 100 requests, in its order. */
  pathsAtLimit100(): string[]
  /** The fake itself, for the byte-for-byte check. */
  fake: FakeChatService
}

interface Conversation {
  id: string
  title: string
  customer_user_id: string
  message_count: number
  created_at: string
  updated_at: string
}
interface Message {
  id: string
  content: string
  role: string
  conversation_id: string
  created_at: string
}

export function buildExportDataset(options: ExportDatasetOptions): ExportDataset {
  const seed = generateDataset({ seed: 1, agents: 5, customerUsers: 200, conversations: options.conversations, messages: options.messages })
  const company = seed.companies[0]!
  const key = company.keys[0]!
  const fake = createFakeChatService({ seed, recordRequests: false })
  const companyId = fake.companyIds()[0]!
  // The fields in the order the fake's routes write them (src/testing/routes.ts).
  const conversations: Conversation[] = fake.listConversations(companyId).map((c) => ({
    id: c.id,
    title: c.title,
    customer_user_id: c.customer_user_id,
    message_count: c.message_count,
    created_at: c.created_at,
    updated_at: c.updated_at,
  }))
  const byId = new Map(conversations.map((c) => [c.id, c]))
  const messages = new Map<string, Message[]>()
  for (const c of conversations) {
    messages.set(
      c.id,
      fake.listMessages(companyId, c.id).map((m) => ({
        id: m.id,
        content: m.content,
        role: m.role,
        conversation_id: m.conversation_id,
        created_at: m.created_at,
      })),
    )
  }

  // The nested loop's order: conversations in list order, each one's messages oldest first. The
  // generated ids increase along it, which is what lets a contender check its order cheaply.
  let count = 0
  let firstId = ''
  let lastId = ''
  for (const c of conversations) {
    for (const m of messages.get(c.id)!) {
      if (m.id <= lastId) throw new Error(`dataset: message ids do not increase in nested-loop order (${m.id} after ${lastId})`)
      if (count++ === 0) firstId = m.id
      lastId = m.id
    }
  }
  const pageCount = (n: number): number => Math.max(1, Math.ceil(n / 100))
  const expected: ExpectedExport = {
    messages: count,
    conversations: conversations.length,
    firstId,
    lastId,
    requestsAtLimit100: pageCount(conversations.length) + conversations.reduce((n, c) => n + pageCount(c.message_count), 0),
  }

  const paging = (query: URLSearchParams, defaultLimit: number): { page: number; limit: number } | string => {
    const page = Number(query.get('page') ?? '1')
    const limit = Number(query.get('limit') ?? String(defaultLimit))
    if (!Number.isSafeInteger(page) || page < 1 || !Number.isSafeInteger(limit) || limit < 1 || limit > 100) return 'bad page or limit'
    return { page, limit }
  }
  const pageOf = <T>(items: readonly T[], p: { page: number; limit: number }): { data: T[]; pagination: object } => ({
    data: items.slice((p.page - 1) * p.limit, p.page * p.limit),
    pagination: { page: p.page, limit: p.limit, total: items.length, total_pages: Math.ceil(items.length / p.limit) },
  })
  const error = (status: number, message: string): { status: number; body: string } => ({
    status,
    body: JSON.stringify({ error: { status, message } }),
  })

  return {
    keyId: key.keyId,
    keySecret: key.keySecret,
    expected,
    fake,
    render(pathname, query) {
      if (pathname === '/rest/v1/conversations') {
        const p = paging(query, 20)
        return typeof p === 'string' ? error(400, p) : { status: 200, body: JSON.stringify(pageOf(conversations, p)) }
      }
      const match = /^\/rest\/v1\/conversations\/([^/]+)\/messages$/.exec(pathname)
      if (match === null) return error(404, 'Not found')
      const conversation = byId.get(decodeURIComponent(match[1]!))
      if (conversation === undefined) return error(404, 'Conversation not found')
      const p = paging(query, 50)
      if (typeof p === 'string') return error(400, p)
      const page = pageOf(messages.get(conversation.id)!, p)
      return {
        status: 200,
        body: JSON.stringify({ ...page, conversation: { id: conversation.id, title: conversation.title } }),
      }
    },
    pathsAtLimit100() {
      const paths: string[] = []
      for (let p = 1; p <= pageCount(conversations.length); p++) paths.push(`/rest/v1/conversations?page=${p}&limit=100`)
      for (const c of conversations) {
        for (let p = 1; p <= pageCount(c.message_count); p++)
          paths.push(`/rest/v1/conversations/${encodeURIComponent(c.id)}/messages?page=${p}&limit=100`)
      }
      return paths
    },
  }
}
