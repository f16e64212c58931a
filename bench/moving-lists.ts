// Lists that move while they are read (issue 28): for each listing of a whole list, RUNS runs
// against the fake service (the BUILT package, listen mode, in this process) while a random
// schedule (seeded, so every run of the script is the same) inserts and deletes records at the
// front, the middle, the end or at random: counts the surviving items missed (there for the whole
// run, not yielded), the duplicates, the runs refused with UnstableListError, and the requests,
// against the same listing of a list that holds still. Never fails on a figure.
//
// Schedules come in three kinds:
// - changing: only deletes, or only inserts (every change moves `total`), on a page or every k-th
//   request (k ≥ 2), up to 4 times each;
// - neutral, first scan: a delete and an insert of as many records at one request (`total` unchanged),
//   when a page is first asked for;
// - neutral, recurring: the same on every k-th request, so also during a second scan.
//   npm run bench:moving-lists                 1,000 runs per list and mode
//   npm run bench:moving-lists -- --runs 100   quicker
import { parseArgs } from 'node:util'
import { ChatServiceClient, UnstableListError } from 'chat-service-sdk'
import {
  createFakeChatService,
  mulberry32,
  type FakeSeed,
  type ListMove,
  type ListPosition,
  type MovableList,
} from 'chat-service-sdk/testing'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '1000' }, seed: { type: 'string', default: '28' } } })
const RUNS = Number(values.runs)
const random = mulberry32(Number(values.seed))
const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1))
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T

const T0 = Date.UTC(2024, 0, 1)
const at = (second: number): string => new Date(T0 + second * 1000).toISOString()
const key = (name: string) => ({ keyId: `key_${name}`, keySecret: `sk_${name}_9f3Kq1` })

/**
 * Three companies: `lists` (230 users, 90 agents, 230 conversations), `messages` (one conversation
 * of 260 messages) and `nested` (130 conversations, the first 30 with 1 to 6 messages).
 */
function seed(): FakeSeed {
  const conversation = (i: number) => ({
    id: `conv_${String(i).padStart(4, '0')}`,
    title: `Conversation ${i}`,
    customer_user_id: 'cu_0000',
    created_at: at(i),
    updated_at: at(i),
  })
  const message = (conversationId: string, m: number) => ({
    id: `${conversationId}_m${String(m).padStart(3, '0')}`,
    content: `message ${m}`,
    role: m % 2 === 0 ? ('user' as const) : ('assistant' as const),
    conversation_id: conversationId,
    created_at: at(10_000 + m),
  })
  const nested = Array.from({ length: 130 }, (_, i) => conversation(i))
  return {
    companies: [
      {
        id: 'lists',
        keys: [key('lists')],
        customerUsers: Array.from({ length: 230 }, (_, i) => ({
          id: `cu_${String(i).padStart(4, '0')}`,
          external_id: `ext_${i}`,
          name: `User ${i}`,
          email: null,
          metadata: {},
          active: true,
          created_at: at(i),
          last_seen_at: at(i),
        })),
        agents: Array.from({ length: 90 }, (_, i) => ({
          id: `agt_${String(i).padStart(3, '0')}`,
          name: `Agent ${i}`,
          active: true,
          created_at: at(i),
          updated_at: at(i),
        })),
        conversations: Array.from({ length: 230 }, (_, i) => conversation(i)),
      },
      {
        id: 'messages',
        keys: [key('messages')],
        conversations: [conversation(0)],
        messages: Array.from({ length: 260 }, (_, m) => message('conv_0000', m)),
      },
      {
        id: 'nested',
        keys: [key('nested')],
        conversations: nested,
        messages: nested.slice(0, 30).flatMap((c, i) => Array.from({ length: 1 + (i % 6) }, (_, m) => message(c.id, m))),
      },
    ],
  }
}

type Kind = 'changing' | 'neutral, first scan' | 'neutral, recurring'
const KINDS: readonly Kind[] = ['changing', 'neutral, first scan', 'neutral, recurring']

function position(length: number): ListPosition {
  const where = pick(['front', 'middle', 'end', 'random'] as const)
  return where === 'middle' ? Math.floor(length / 2) : where
}

/** A random schedule of `kind` for `list` (of about `length` records, read in about `pages` pages). */
function schedule(kind: Kind, list: MovableList, length: number, pages: number, extra: Partial<ListMove> = {}, maxTimes = 4): ListMove[] {
  const moves: ListMove[] = []
  const deleting = random() < 0.5
  for (let n = int(1, 3); n > 0; n--) {
    const count = int(1, 3)
    if (kind === 'changing') {
      const when = random() < 0.5 ? { page: int(1, pages) } : { every: int(2, 6) }
      moves.push({
        list,
        when,
        [deleting ? 'delete' : 'insert']: { at: position(length), count },
        times: int(1, maxTimes),
        seed: int(0, 1e9),
        ...extra,
      })
    } else {
      const when = kind === 'neutral, first scan' ? { page: int(1, pages) } : { every: int(2, 6) }
      moves.push({
        list,
        when,
        delete: { at: position(length), count },
        insert: { at: position(length), count },
        times: int(1, maxTimes),
        seed: int(0, 1e9),
        ...extra,
      })
    }
  }
  return moves
}

const fake = createFakeChatService({ seed: seed() })
const server = await fake.listen()
const clientOf = (name: string): ChatServiceClient => new ChatServiceClient({ baseUrl: server.url, ...key(name), logLevel: 'off' })
const lists = clientOf('lists')
const messages = clientOf('messages')
const nestedClient = clientOf('nested')

interface Listing {
  readonly name: string
  /** The list the schedules move, and how to read its ids from the fake. */
  readonly list: MovableList
  readonly ids: () => string[]
  readonly length: number
  readonly pages: number
  readonly extra?: Partial<ListMove>
  /** Also moves messages (listAll, listNew): a count-changing schedule of them. */
  readonly messages?: boolean
  /** Runs the listing once with `limit`; returns the ids it yielded. */
  readonly run: (limit: number) => Promise<string[]>
  /** The limits it is run with. */
  readonly limits: readonly [number, number]
}

const collect = async (items: AsyncIterable<{ id: string }>): Promise<string[]> => {
  const ids: string[] = []
  for await (const item of items) ids.push(item.id)
  return ids
}
const users = (): string[] => fake.listCustomerUsers('lists').map((u) => u.id)
const agents = (): string[] => fake.listAgents('lists').map((a) => a.id)
const conversations = (): string[] => fake.listConversations('lists').map((c) => c.id)
const bigConversation = (): string[] => fake.listMessages('messages', 'conv_0000').map((m) => m.id)
const allMessages = (): string[] => fake.listConversations('nested').flatMap((c) => fake.listMessages('nested', c.id).map((m) => m.id))

const listings = (rescan: boolean): Listing[] => [
  {
    name: 'customerUsers.list',
    list: 'customerUsers',
    ids: users,
    length: 230,
    pages: 12,
    limits: [5, 50],
    run: (limit) => collect(lists.customerUsers.list({ limit }, { rescan })),
  },
  {
    name: 'agents.list (prefetch 2)',
    list: 'agents',
    ids: agents,
    length: 90,
    pages: 5,
    limits: [5, 30],
    run: (limit) => collect(lists.agents.list({ limit }, { rescan, prefetch: 2 })),
  },
  {
    name: 'conversations.list',
    list: 'conversations',
    ids: conversations,
    length: 230,
    pages: 12,
    limits: [5, 50],
    run: (limit) => collect(lists.conversations.list({ limit }, { rescan })),
  },
  {
    name: 'messages.list (one conversation)',
    list: 'messages',
    ids: bigConversation,
    length: 260,
    pages: 13,
    limits: [5, 50],
    run: (limit) => collect(messages.conversations.messages.list('conv_0000', { limit }, { rescan })),
  },
]
const nested: Listing[] = [
  {
    name: 'messages.listAll',
    list: 'conversations',
    ids: allMessages,
    length: 130,
    pages: 2,
    messages: true,
    limits: [1, 3],
    run: (limit) => collect(nestedClient.conversations.messages.listAll({ limit, concurrency: int(1, 8) })),
  },
  {
    name: 'messages.listNew (two nights)',
    list: 'conversations',
    ids: allMessages,
    length: 130,
    pages: 2,
    messages: true,
    limits: [1, 3],
    run: async (limit) => {
      const first = nestedClient.conversations.messages.listNew({ limit, concurrency: int(1, 8) })
      const ids = await collect(first)
      fake.clearListMoves()
      // A conversation one scan moved past is new to the next night: exactly once across nights.
      return [...ids, ...(await collect(nestedClient.conversations.messages.listNew({ checkpoint: first.checkpoint(), limit })))]
    },
  },
]

interface Tally {
  runs: number
  /** Runs that ended with another error than UnstableListError (none expected). */
  failed: number
  missed: number
  runsMissing: number
  duplicates: number
  unstable: number
  requests: number
  quietRequests: number
}

/** Requests of each listing over data that holds still, by limit (measured once each). */
const quietRequests = new Map<string, number>()

async function quiet(listing: Listing, limit: number): Promise<number> {
  const known = quietRequests.get(`${listing.name}:${limit}`)
  if (known !== undefined) return known
  fake.reset()
  await listing.run(limit)
  const requests = fake.requests.length
  quietRequests.set(`${listing.name}:${limit}`, requests)
  return requests
}

async function measure(listing: Listing, kind: Kind | 'quiet'): Promise<Tally> {
  const tally: Tally = { runs: 0, failed: 0, missed: 0, runsMissing: 0, duplicates: 0, unstable: 0, requests: 0, quietRequests: 0 }
  for (let r = 0; r < RUNS; r++) {
    const limit = int(...listing.limits)
    tally.quietRequests += await quiet(listing, limit)
    fake.reset()
    const before = listing.ids()
    if (kind !== 'quiet') {
      for (const move of schedule(kind, listing.list, listing.length, listing.pages, listing.extra)) fake.moveList(move)
      // Messages grow at most a few times: a list may grow while it is read, not beyond paging rule 6 (2 × T + 10 pages).
      if (listing.messages === true) for (const move of schedule('changing', 'messages', 3, 2, {}, 1)) fake.moveList(move)
    }
    let got: string[] = []
    try {
      got = await listing.run(limit)
    } catch (error) {
      if (error instanceof UnstableListError) tally.unstable++
      else {
        // Not expected: reported (with the schedule) rather than ending the benchmark.
        tally.failed++
        console.error(`${listing.name}, ${kind}: ${String(error)}`)
      }
    }
    tally.requests += fake.requests.length
    const after = new Set(listing.ids())
    const seen = new Set(got)
    const missed = before.filter((id) => after.has(id) && !seen.has(id)).length
    tally.runs++
    tally.missed += missed
    if (missed > 0) tally.runsMissing++
    tally.duplicates += got.length - seen.size
  }
  return tally
}

const rows: string[][] = [
  ['listing', 'schedules', 'runs', 'missed (runs)', 'duplicates', 'UnstableListError', 'requests / run', 'quiet / run', 'extra'],
]
const add = (name: string, kind: string, t: Tally): void => {
  const per = t.requests / t.runs
  const quiet = t.quietRequests / t.runs
  rows.push([
    name,
    kind,
    String(t.runs),
    `${t.missed} (${t.runsMissing})`,
    String(t.duplicates),
    String(t.unstable),
    String(t.failed),
    per.toFixed(1),
    quiet.toFixed(1),
    `${(((per - quiet) / quiet) * 100).toFixed(1)} %`,
  ])
}

console.log(`Lists that move: ${RUNS} runs per listing and schedule kind, seed ${values.seed}\n`)
for (const rescan of [false, true]) {
  for (const listing of listings(rescan)) {
    const name = `${listing.name}${rescan ? ' { rescan: true }' : ''}`
    // Nothing moves: the cost of the listing's own guard (0 for plain iteration, one scan more with rescan).
    const quiet = await measure(listing, 'quiet')
    add(name, 'none (holds still)', quiet)
    for (const kind of KINDS) add(name, kind, await measure(listing, kind))
  }
}
for (const listing of nested) {
  add(listing.name, 'none (holds still)', await measure(listing, 'quiet'))
  for (const kind of KINDS) add(listing.name, kind, await measure(listing, kind))
}

// The cost of listAll's second scan when nothing moves, on a company of 2,500 conversations of
// 40 messages (100 a page: what an export reads), against one scan.
const big = createFakeChatService({
  seed: {
    companies: [
      {
        id: 'export',
        keys: [key('export')],
        conversations: Array.from({ length: 2_500 }, (_, i) => ({
          id: `c${i}`,
          title: 't',
          customer_user_id: 'u',
          created_at: at(i),
          updated_at: at(i),
        })),
        messages: Array.from({ length: 2_500 * 40 }, (_, n) => ({
          id: `m${n}`,
          content: 'hi',
          role: 'user' as const,
          conversation_id: `c${Math.floor(n / 40)}`,
          created_at: at(n),
        })),
      },
    ],
  },
})
const exportServer = await big.listen()
const exporter = new ChatServiceClient({ baseUrl: exportServer.url, ...key('export'), logLevel: 'off' })
await collect(exporter.conversations.messages.listAll({ rescan: false }))
const single = big.requests.length
big.clearRequests()
await collect(exporter.conversations.messages.listAll())
const twice = big.requests.length
await exporter.close()
await exportServer.close()
rows.push([])
rows.push(['listAll, 2,500 conversations × 40 messages, nothing moves: one scan', '', '', '', '', '', '', String(single), '', ''])
rows.push([
  '  with its second scan (the default)',
  '',
  '',
  '',
  '',
  '',
  '',
  String(twice),
  String(single),
  `${(((twice - single) / single) * 100).toFixed(1)} %`,
])

const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? []
for (const row of rows)
  console.log(
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd(),
  )

await lists.close()
await messages.close()
await nestedClient.close()
await server.close()
