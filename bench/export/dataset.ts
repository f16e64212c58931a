// The export benchmark's data: the fake's generated dataset (chat-service-sdk/testing, built), its
// list pages rendered exactly as the fake renders them (checked byte for byte against the fake at
// start-up), and what a correct export must deliver. `grow()` makes night 2 of the nightly
// benchmark: it appends messages to some conversations through the fake's own `appendMessages`
// (which moves `message_count` and `updated_at` as the service would) and renders that state too.
import { createFakeChatService, generateDataset, mulberry32, type FakeChatService } from 'chat-service-sdk/testing'

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

/** One state of the company's data (a night), as the service would serve it. */
export interface NightView {
  /** The JSON body the fake would send for this service path + query (`/rest/v1/...?page=&limit=`), or an error. */
  render(pathname: string, query: URLSearchParams): { status: number; body: string }
  /** Every path a nested loop at limit 100 requests, in its order. */
  pathsAtLimit100(): string[]
}

export interface ExportDataset extends NightView {
  keyId: string
  keySecret: string
  expected: ExpectedExport
  /** The fake itself, for the byte-for-byte check (its state follows `grow()`). */
  fake: FakeChatService
  /**
   * Night 2: appends messages to `fraction` of the conversations (every conversation has the same
   * chance, picked by a seeded generator; 1 to `maxAdded` messages each) through the fake's
   * `appendMessages`, and returns that state. Once only; the night-1 view above keeps serving night 1.
   */
  grow(options: GrowOptions): GrownNight
}

export interface GrowOptions {
  /** Share of the conversations that grow, e.g. 0.05. */
  fraction: number
  /** Each grown conversation gets 1 to `maxAdded` messages. */
  maxAdded: number
  seed: number
}

/** Night 2 of the nightly benchmark, and what a correct run on it must deliver. */
export interface NightlyExpected {
  conversations: number
  /** Conversations that grew, and messages added. */
  grown: number
  added: number
  /** Ids of the added messages, in nested-loop order: what an incremental run must yield, exactly. */
  newIds: string[]
  /** Every message id of night 2, in nested-loop order: what a full export must yield, exactly. */
  allIds: string[]
  /** Conversation-list requests at 100 a page: ceil(C / 100), the cost of a night with nothing new. */
  scanRequests: number
  /** Requests of a full export at limit 100 on night 2. */
  fullRequests: number
  /**
   * Requests of the hand-written incremental pass at limit 100: the scan, plus, per grown
   * conversation, the pages from the one holding its first new message to its last page.
   */
  incrementalRequests: number
  /**
   * Requests listNew makes at limit 100 by its documented plan: the scan, plus, per grown
   * conversation, the pages from the one holding the last message it had read (checked) to the last.
   */
  listNewRequests: number
}

export interface GrownNight extends NightView {
  expected: NightlyExpected
  /** Paths of night 2 that differ from night 1 (pre-rendered again by the server). */
  changedPaths(): string[]
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

/** The data of one night: conversations in list order, each one's messages oldest first. */
interface Snapshot {
  conversations: Conversation[]
  byId: Map<string, Conversation>
  messages: Map<string, Message[]>
}

const pageCount = (n: number): number => Math.max(1, Math.ceil(n / 100))

/** Reads the fake's state, with the fields in the order the fake's routes write them (src/testing/views.ts). */
function snapshotOf(fake: FakeChatService, companyId: string, only?: ReadonlySet<string>, base?: Snapshot): Snapshot {
  const conversations: Conversation[] = fake.listConversations(companyId).map((c) => ({
    id: c.id,
    title: c.title,
    customer_user_id: c.customer_user_id,
    message_count: c.message_count,
    created_at: c.created_at,
    updated_at: c.updated_at,
  }))
  const messages = new Map<string, Message[]>()
  for (const c of conversations) {
    const known = only === undefined || only.has(c.id) ? undefined : base?.messages.get(c.id)
    messages.set(
      c.id,
      known ??
        fake.listMessages(companyId, c.id).map((m) => ({
          id: m.id,
          content: m.content,
          role: m.role,
          conversation_id: m.conversation_id,
          created_at: m.created_at,
        })),
    )
  }
  return { conversations, byId: new Map(conversations.map((c) => [c.id, c])), messages }
}

function viewOf(snapshot: Snapshot): NightView {
  const { conversations, byId, messages } = snapshot
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
        for (let p = 1; p <= pageCount(c.message_count); p++) paths.push(messagesPath(c.id, p))
      }
      return paths
    },
  }
}

const messagesPath = (id: string, page: number): string =>
  `/rest/v1/conversations/${encodeURIComponent(id)}/messages?page=${page}&limit=100`

export function buildExportDataset(options: ExportDatasetOptions): ExportDataset {
  const seed = generateDataset({ seed: 1, agents: 5, customerUsers: 200, conversations: options.conversations, messages: options.messages })
  const company = seed.companies[0]!
  const key = company.keys[0]!
  // A fixed clock: what appendMessages generates (created_at, updated_at) is the same in every run.
  const fake = createFakeChatService({ seed, recordRequests: false, now: () => new Date('2030-01-01T00:00:00.000Z') })
  const companyId = fake.companyIds()[0]!
  const night1 = snapshotOf(fake, companyId)
  const { conversations, messages } = night1

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
  const expected: ExpectedExport = {
    messages: count,
    conversations: conversations.length,
    firstId,
    lastId,
    requestsAtLimit100: pageCount(conversations.length) + conversations.reduce((n, c) => n + pageCount(c.message_count), 0),
  }
  let grown: GrownNight | undefined

  return {
    keyId: key.keyId,
    keySecret: key.keySecret,
    expected,
    fake,
    ...viewOf(night1),
    grow(growth) {
      if (grown !== undefined) return grown
      const next = mulberry32(growth.seed)
      const target = Math.round(conversations.length * growth.fraction)
      const picked = new Set<string>()
      while (picked.size < target) picked.add(conversations[Math.floor(next() * conversations.length)]!.id)
      for (const id of picked) fake.appendMessages(companyId, id, 1 + Math.floor(next() * growth.maxAdded))
      const night2 = snapshotOf(fake, companyId, picked, night1)
      const newIds: string[] = []
      const allIds: string[] = []
      let incremental = pageCount(night2.conversations.length)
      let listNew = incremental
      let added = 0
      for (const c of night2.conversations) {
        const all = night2.messages.get(c.id)!
        for (const m of all) allIds.push(m.id)
        const before = night1.byId.get(c.id)!.message_count
        if (c.message_count === before) continue
        for (const m of all.slice(before)) newIds.push(m.id)
        added += c.message_count - before
        const last = pageCount(c.message_count)
        incremental += last - (Math.floor(before / 100) + 1) + 1
        listNew += last - (before === 0 ? 1 : Math.floor((before - 1) / 100) + 1) + 1
      }
      const view = viewOf(night2)
      grown = {
        ...view,
        expected: {
          conversations: night2.conversations.length,
          grown: picked.size,
          added,
          newIds,
          allIds,
          scanRequests: pageCount(night2.conversations.length),
          fullRequests: view.pathsAtLimit100().length,
          incrementalRequests: incremental,
          listNewRequests: listNew,
        },
        changedPaths() {
          const paths: string[] = []
          for (let p = 1; p <= pageCount(night2.conversations.length); p++) paths.push(`/rest/v1/conversations?page=${p}&limit=100`)
          for (const id of picked) {
            for (let p = 1; p <= pageCount(night2.byId.get(id)!.message_count); p++) paths.push(messagesPath(id, p))
          }
          return paths
        },
      }
      return grown
    },
  }
}
