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

const COMPANY = 'comp_moving'
const KEY = { keyId: 'key_moving', keySecret: 'sk_moving_9f3Kq1' }
const T0 = Date.UTC(2024, 0, 1)
const at = (second: number): string => new Date(T0 + second * 1000).toISOString()

/** 230 users, 90 agents, 230 conversations (0 to 4 messages each, conversation 0 with 260). */
function seed(): FakeSeed {
  const conversations = Array.from({ length: 230 }, (_, i) => ({
    id: `conv_${String(i).padStart(4, '0')}`,
    title: `Conversation ${i}`,
    customer_user_id: 'cu_0000',
    created_at: at(i),
    updated_at: at(i),
  }))
  return {
    companies: [
      {
        id: COMPANY,
        keys: [KEY],
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
        conversations,
        messages: conversations.flatMap((conversation, c) =>
          Array.from({ length: c === 0 ? 260 : (c * 7) % 5 }, (_, m) => ({
            id: `${conversation.id}_m${String(m).padStart(3, '0')}`,
            content: `message ${m}`,
            role: m % 2 === 0 ? ('user' as const) : ('assistant' as const),
            conversation_id: conversation.id,
            created_at: at(10_000 + m),
          })),
        ),
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
function schedule(kind: Kind, list: MovableList, length: number, pages: number, extra: Partial<ListMove> = {}): ListMove[] {
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
        times: int(1, 4),
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
        times: int(1, 4),
        seed: int(0, 1e9),
        ...extra,
      })
    }
  }
  return moves
}

const fake = createFakeChatService({ seed: seed() })
const server = await fake.listen()
const client = new ChatServiceClient({ baseUrl: server.url, ...KEY, logLevel: 'off' })

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
  /** Runs the listing once; returns the ids it yielded. */
  readonly run: () => Promise<string[]>
}

const collect = async (items: AsyncIterable<{ id: string }>): Promise<string[]> => {
  const ids: string[] = []
  for await (const item of items) ids.push(item.id)
  return ids
}
const users = (): string[] => fake.listCustomerUsers(COMPANY).map((u) => u.id)
const agents = (): string[] => fake.listAgents(COMPANY).map((a) => a.id)
const conversations = (): string[] => fake.listConversations(COMPANY).map((c) => c.id)
const messagesOf = (id: string) => (): string[] => fake.listMessages(COMPANY, id).map((m) => m.id)
const allMessages = (): string[] => fake.listConversations(COMPANY).flatMap((c) => fake.listMessages(COMPANY, c.id).map((m) => m.id))

let limit = 20
const listings = (rescan: boolean): Listing[] => [
  {
    name: 'customerUsers.list',
    list: 'customerUsers',
    ids: users,
    length: 230,
    pages: 12,
    run: () => collect(client.customerUsers.list({ limit }, { rescan })),
  },
  {
    name: 'agents.list (prefetch 2)',
    list: 'agents',
    ids: agents,
    length: 90,
    pages: 5,
    run: () => collect(client.agents.list({ limit }, { rescan, prefetch: 2 })),
  },
  {
    name: 'conversations.list',
    list: 'conversations',
    ids: conversations,
    length: 230,
    pages: 12,
    run: () => collect(client.conversations.list({ limit }, { rescan })),
  },
  {
    name: 'messages.list (one conversation)',
    list: 'messages',
    ids: messagesOf('conv_0000'),
    length: 260,
    pages: 13,
    extra: { conversationId: 'conv_0000' },
    run: () => collect(client.conversations.messages.list('conv_0000', { limit }, { rescan })),
  },
]
const nested: Listing[] = [
  {
    name: 'messages.listAll',
    list: 'conversations',
    ids: allMessages,
    length: 230,
    pages: 3,
    messages: true,
    run: () => collect(client.conversations.messages.listAll({ limit: int(1, 3), concurrency: int(1, 8) })),
  },
  {
    name: 'messages.listNew (two nights)',
    list: 'conversations',
    ids: allMessages,
    length: 230,
    pages: 3,
    messages: true,
    run: async () => {
      const first = client.conversations.messages.listNew({ limit: int(1, 3), concurrency: int(1, 8) })
      const ids = await collect(first)
      fake.clearListMoves()
      // A conversation one scan moved past is new to the next night: exactly once across nights.
      return [...ids, ...(await collect(client.conversations.messages.listNew({ checkpoint: first.checkpoint() })))]
    },
  },
]

interface Tally {
  runs: number
  missed: number
  runsMissing: number
  duplicates: number
  unstable: number
  requests: number
  quietRequests: number
}

async function measure(listing: Listing, kind: Kind | 'quiet'): Promise<Tally> {
  const tally: Tally = { runs: 0, missed: 0, runsMissing: 0, duplicates: 0, unstable: 0, requests: 0, quietRequests: 0 }
  for (let r = 0; r < RUNS; r++) {
    limit = int(5, 50)
    fake.reset()
    // The same listing over a list that holds still: its requests.
    await listing.run()
    tally.quietRequests += fake.requests.length
    fake.reset()
    const before = listing.ids()
    if (kind !== 'quiet') {
      for (const move of schedule(kind, listing.list, listing.length, listing.pages, listing.extra)) fake.moveList(move)
      if (listing.messages === true) for (const move of schedule('changing', 'messages', 3, 2)) fake.moveList(move)
    }
    let got: string[] = []
    try {
      got = await listing.run()
    } catch (error) {
      if (!(error instanceof UnstableListError)) throw error
      tally.unstable++
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

// The cost of listAll's second scan when nothing moves, against the plain nested loop's requests.
fake.reset()
await collect(client.conversations.messages.listAll({ rescan: false }))
const single = fake.requests.length
fake.reset()
await collect(client.conversations.messages.listAll())
const twice = fake.requests.length
rows.push([])
rows.push(['listAll, nothing moves: one scan', '', '', '', '', '', String(single), '', ''])
rows.push([
  'listAll, nothing moves: with its second scan (default)',
  '',
  '',
  '',
  '',
  '',
  String(twice),
  '',
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

await client.close()
await server.close()
