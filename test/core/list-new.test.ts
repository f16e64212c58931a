// conversations.messages.listNew at the wire, against a loopback server whose data the tests
// change between runs (test/helpers/company-server.ts): what each night yields and costs, the
// summary, checkpoints taken at any moment and resumed, merged checkpoints, malformed ones, and a
// conversation list that shifts while it is read.
import { afterEach, describe, expect, it } from 'vitest'
import {
  ChatServiceClient,
  RequestValidationError,
  shardOf,
  type ClientOptions,
  type Message,
  type MessagesCheckpoint,
  type resources,
} from 'chat-service-sdk'
import { modelOf, startCompanyServer, type CompanyServer, type ModelConversation, type PageRequest } from '../helpers/company-server.ts'
import { KEY } from '../helpers/list-all-data.ts'
import { recordingLogger } from '../helpers/loopback.ts'
import { messageIdFingerprint } from '../../src/pagination/checkpoint.ts'

const open: { server: CompanyServer; client: ChatServiceClient }[] = []

afterEach(async () => {
  for (const { server, client } of open.splice(0)) {
    await client.close()
    await server.close()
  }
})

async function serve(
  sizes: readonly number[],
  options: Partial<ClientOptions> = {},
): Promise<{ server: CompanyServer; client: ChatServiceClient }> {
  const server = await startCompanyServer(modelOf(sizes))
  const client = new ChatServiceClient({ baseUrl: server.origin, ...KEY, ...options })
  open.push({ server, client })
  return { server, client }
}

/** The repairs of a run over data that held still. */
const QUIET = {
  conversations: { scans: 1, shifts: 0, rereads: 0, recovered: 0, repeated: 0 },
  messages: { scans: 1, shifts: 0, rereads: 0, recovered: 0, repeated: 0 },
}

let clock = 0
/** A later `updated_at` than any before it. */
function later(): string {
  clock++
  return new Date(Date.UTC(2025, 0, 1) + clock * 1000).toISOString()
}

/** Appends `n` messages to a conversation of the model, as the service would (count and updated_at move). */
function append(conversation: ModelConversation, n: number): string[] {
  const ids = Array.from({ length: n }, (_, i) => `${conversation.id}-n${String(conversation.messages.length + i).padStart(4, '0')}`)
  conversation.messages.push(...ids)
  conversation.updatedAt = later()
  return ids
}

/** A conversation added to the model at `at` (0: the front of the list), with `n` messages. */
function addConversation(model: ModelConversation[], id: string, n: number, at = model.length): ModelConversation {
  const conversation: ModelConversation = {
    id,
    messages: Array.from({ length: n }, (_, m) => `${id}-m${String(m).padStart(4, '0')}`),
    updatedAt: later(),
  }
  model.splice(at, 0, conversation)
  return conversation
}

async function drain(messages: AsyncIterable<Message>): Promise<string[]> {
  const ids: string[] = []
  for await (const message of messages) ids.push(message.id)
  return ids
}

/** Runs listNew to the end; returns what it yielded, its checkpoint and summary, and the requests it cost. */
async function night(
  server: CompanyServer,
  client: ChatServiceClient,
  checkpoint: MessagesCheckpoint | MessagesCheckpoint[] | undefined,
  params: { limit?: number; concurrency?: number; shard?: { index: number; count: number } } = {},
): Promise<{ ids: string[]; run: resources.NewMessages; checkpoint: MessagesCheckpoint; requests: PageRequest[] }> {
  const before = server.requests.length
  const run = client.conversations.messages.listNew({ checkpoint, ...params })
  const ids = await drain(run)
  // A round trip through JSON, as a user stores it.
  const next = JSON.parse(JSON.stringify(run.checkpoint())) as MessagesCheckpoint
  return { ids, run, checkpoint: next, requests: server.requests.slice(before) }
}

/** The checkpoint's entry for one conversation, `[read, lastMessageId, updatedAt]` (its columns at the id's index). */
function entryOf(checkpoint: MessagesCheckpoint, id: string): [number, string | number | null, string] | undefined {
  const i = checkpoint.conversations.indexOf(id)
  if (i < 0) return undefined
  return [checkpoint.read[i] as number, checkpoint.lastMessageIds[i] ?? null, checkpoint.updatedAt[i] as string]
}

/** A checkpoint of the given entries, as checkpoint() writes one. */
function checkpointOf(entries: Record<string, [number, string | number | null, string]>): MessagesCheckpoint {
  const ids = Object.keys(entries)
  return {
    version: 2,
    conversations: ids,
    read: ids.map((id) => entries[id]?.[0] as number),
    lastMessageIds: ids.map((id) => entries[id]?.[1] ?? null),
    updatedAt: ids.map((id) => entries[id]?.[2] as string),
  }
}

const messagePages = (requests: readonly PageRequest[]): PageRequest[] => requests.filter((r) => r.kind === 'messages')
const conversationPages = (requests: readonly PageRequest[]): PageRequest[] => requests.filter((r) => r.kind === 'conversations')

describe('night after night', () => {
  it('the first run yields every message in nested-loop order, classes every conversation new, and costs what listAll costs (less the empty ones)', async () => {
    const sizes = [3, 0, 250, 1, 0, 100, 7]
    const { server, client } = await serve(sizes)
    const { ids, run, checkpoint, requests } = await night(server, client, undefined)
    expect(ids).toEqual(server.conversations.flatMap((c) => c.messages))
    expect(run.summary).toEqual({ new: 7, grown: 0, unchanged: 0, rewound: [], deleted: [], scans: 1, complete: true, repairs: QUIET })
    expect(run.progress).toEqual({ done: ids.length, total: ids.length })
    // Empty conversations need no request: message_count says there is nothing to read.
    expect(
      messagePages(requests)
        .map((r) => `${r.conversationId ?? ''}:${r.page}`)
        .sort(),
    ).toEqual(['c000:1', 'c002:1', 'c002:2', 'c002:3', 'c003:1', 'c005:1', 'c006:1'])
    expect(checkpoint.version).toBe(2)
    expect([...checkpoint.conversations].sort()).toEqual(server.conversations.map((c) => c.id))
    expect(entryOf(checkpoint, 'c002')).toEqual([250, 'c002-m0249', '2024-06-01T00:00:00.000Z'])
    expect(entryOf(checkpoint, 'c001')).toEqual([0, null, '2024-06-01T00:00:00.000Z'])
  })

  it('a night with nothing new costs exactly the conversation scan, ceil(C / 100) requests, and yields nothing', async () => {
    const sizes = Array.from({ length: 250 }, (_, i) => i % 7)
    const { server, client } = await serve(sizes)
    const first = await night(server, client, undefined)
    const second = await night(server, client, first.checkpoint)
    expect(second.ids).toEqual([])
    expect(second.requests.map((r) => `${r.kind}:${r.page}`)).toEqual(['conversations:1', 'conversations:2', 'conversations:3'])
    expect(second.run.summary).toEqual({
      new: 0,
      grown: 0,
      unchanged: 250,
      rewound: [],
      deleted: [],
      scans: 1,
      complete: true,
      repairs: QUIET,
    })
    expect(second.checkpoint).toEqual(first.checkpoint)
  })

  it('grown conversations yield only what was added, in nested-loop order, one request each when the new messages share the page', async () => {
    const sizes = Array.from({ length: 40 }, (_, i) => 5 + (i % 30))
    const { server, client } = await serve(sizes)
    const first = await night(server, client, undefined)
    const model = server.conversations
    const added = [
      ...append(model[3] as ModelConversation, 2),
      ...append(model[17] as ModelConversation, 1),
      ...append(model[39] as ModelConversation, 4),
    ]
    const second = await night(server, client, first.checkpoint)
    expect(second.ids).toEqual(added)
    expect(second.run.summary).toMatchObject({ new: 0, grown: 3, unchanged: 37, rewound: [], deleted: [] })
    expect(
      messagePages(second.requests)
        .map((r) => `${r.conversationId ?? ''}:${r.page}`)
        .sort(),
    ).toEqual(['c003:1', 'c017:1', 'c039:1'])
    expect(conversationPages(second.requests)).toHaveLength(1)
    // The next night starts from there.
    const third = await night(server, client, second.checkpoint)
    expect(third.ids).toEqual([])
  })

  it('reads from the page that holds the last message read, across page boundaries and at exact multiples of the limit', async () => {
    // limit 10: 20 messages read (an exact multiple), 25 read (mid-page), 9 read (one short of a page).
    const { server, client } = await serve([20, 25, 9])
    const first = await night(server, client, undefined, { limit: 10 })
    const [a, b, c] = server.conversations as [ModelConversation, ModelConversation, ModelConversation]
    const added = [...append(a, 12), ...append(b, 3), ...append(c, 1)]
    const second = await night(server, client, first.checkpoint, { limit: 10 })
    expect(second.ids).toEqual(added)
    expect(
      messagePages(second.requests)
        .map((r) => `${r.conversationId ?? ''}:${r.page}`)
        .sort(),
    ).toEqual([
      // message 19 (the last read) is on page 2; the new ones are on pages 3 and 4
      'c000:2',
      'c000:3',
      'c000:4',
      'c001:3',
      'c002:1',
    ])
    expect(entryOf(second.checkpoint, 'c000')).toEqual([32, a.messages[31], a.updatedAt])
  })

  it('new conversations at the front and at the end of the list are read whole, the others only for what is new', async () => {
    const { server, client } = await serve([4, 6])
    const first = await night(server, client, undefined)
    const model = server.conversations
    const front = addConversation(model, 'a-front', 3, 0)
    const grown = append(model[2] as ModelConversation, 2)
    const end = addConversation(model, 'z-end', 2)
    const second = await night(server, client, first.checkpoint)
    expect(second.ids).toEqual([...front.messages, ...grown, ...end.messages])
    expect(second.run.summary).toMatchObject({ new: 2, grown: 1, unchanged: 1, rewound: [], deleted: [] })
  })

  it('a conversation with fewer messages than were read is read again from its first message (rewound)', async () => {
    const { server, client } = await serve([5, 5, 5])
    const first = await night(server, client, undefined)
    const shrunk = server.conversations[1] as ModelConversation
    shrunk.messages.splice(1, 2) // two messages deleted
    shrunk.updatedAt = later()
    const second = await night(server, client, first.checkpoint)
    expect(second.ids).toEqual(shrunk.messages)
    expect(second.run.summary).toMatchObject({ new: 0, grown: 0, unchanged: 2, rewound: ['c001'], deleted: [] })
    expect(entryOf(second.checkpoint, 'c001')).toEqual([3, shrunk.messages[2], shrunk.updatedAt])
  })

  it('a conversation whose last message read is not where it was is read again from its first message, even with more messages than before', async () => {
    const { server, client } = await serve([5, 30])
    const first = await night(server, client, undefined, { limit: 10 })
    const changed = server.conversations[1] as ModelConversation
    changed.messages.splice(3, 1) // one deleted before the last read ...
    append(changed, 4) // ... and four added: 33, more than the 30 read
    const second = await night(server, client, first.checkpoint, { limit: 10 })
    expect(second.ids).toEqual(changed.messages)
    expect(second.run.summary).toMatchObject({ grown: 0, unchanged: 1, rewound: ['c001'] })
    // The check read page 3 (holding message 29; page 4 may have been read ahead meanwhile), then pages 1 to 4 from the start.
    const pages = messagePages(second.requests)
      .filter((r) => r.conversationId === 'c001')
      .map((r) => r.page)
    expect(pages[0]).toBe(3)
    expect(pages.slice(-4).sort()).toEqual([1, 2, 3, 4])
    expect(pages.length).toBeLessThanOrEqual(6)
  })

  it('the same count with another updated_at costs one request: unchanged when the last message read is still there', async () => {
    const { server, client } = await serve([8, 8])
    const first = await night(server, client, undefined)
    const touched = server.conversations[0] as ModelConversation
    touched.updatedAt = later() // a title change, say
    const second = await night(server, client, first.checkpoint)
    expect(second.ids).toEqual([])
    expect(second.run.summary).toMatchObject({ grown: 0, unchanged: 2, rewound: [] })
    expect(messagePages(second.requests)).toHaveLength(1)
    // Its entry moves to the new updated_at: the next night costs nothing for it.
    const third = await night(server, client, second.checkpoint)
    expect(messagePages(third.requests)).toHaveLength(0)
  })

  it('a message_count above what the pages hold reads nothing new and says unchanged', async () => {
    const { server, client } = await serve([6])
    const first = await night(server, client, undefined)
    const lying = server.conversations[0] as ModelConversation
    lying.messageCount = 9
    lying.updatedAt = later()
    const second = await night(server, client, first.checkpoint)
    expect(second.ids).toEqual([])
    expect(second.run.summary).toMatchObject({ grown: 0, unchanged: 1 })
  })

  it('conversations the checkpoint has and the list no longer lists are deleted and leave the checkpoint', async () => {
    const { server, client } = await serve([2, 2, 2, 2])
    const first = await night(server, client, undefined)
    server.conversations.splice(1, 2)
    const second = await night(server, client, first.checkpoint)
    expect(second.ids).toEqual([])
    expect(second.run.summary).toMatchObject({ unchanged: 2, deleted: ['c001', 'c002'] })
    expect(second.checkpoint.conversations).toEqual(['c000', 'c003'])
  })

  it('a conversation that vanishes (404) while it is read counts as deleted, is logged at warn, and the run goes on', async () => {
    const logger = recordingLogger()
    const { server, client } = await serve([3, 3, 3], { logger })
    const first = await night(server, client, undefined)
    for (const conversation of server.conversations) append(conversation, 1)
    server.decide((request) => (request.kind === 'messages' && request.conversationId === 'c001' ? { status: 404 } : undefined))
    const second = await night(server, client, first.checkpoint)
    expect(second.ids).toEqual(['c000-n0003', 'c002-n0003'])
    expect(second.run.summary?.deleted).toEqual(['c001'])
    expect(entryOf(second.checkpoint, 'c001')).toBeUndefined()
    expect(logger.messages('warn')).toEqual([expect.stringContaining('conversation c001 vanished (404)')])
  })
})

describe('progress and summary', () => {
  it('summary is undefined until the scan is complete; progress.total is the sum of what is new', async () => {
    const sizes = Array.from({ length: 150 }, () => 2)
    const { server, client } = await serve(sizes)
    const first = await night(server, client, undefined)
    const added = [...append(server.conversations[0] as ModelConversation, 3), ...append(server.conversations[149] as ModelConversation, 2)]
    const run = client.conversations.messages.listNew({ checkpoint: first.checkpoint })
    expect(run.summary).toBeUndefined()
    expect(run.progress).toEqual({ done: 0, total: undefined })
    const seen: { done: number; total: number | undefined }[] = []
    for await (const _ of run) seen.push(run.progress)
    expect(seen.map((p) => p.done)).toEqual([1, 2, 3, 4, 5])
    expect(seen.at(-1)?.total).toBe(added.length)
    expect(run.summary).toMatchObject({ grown: 2, unchanged: 148 })
  })
})

describe('checkpoint() at any moment', () => {
  // Five conversations of 23 messages at limit 10: pages end mid-conversation and at its end.
  const sizes = [23, 23, 23, 23, 23]

  /** Breaks off the second night after `stopAt` messages, then resumes from checkpoint(): together they must equal one uninterrupted night. */
  async function interruptedNight(stopAt: number): Promise<{ whole: string[]; pieces: string[] }> {
    const { server, client } = await serve(sizes)
    const first = await night(server, client, undefined, { limit: 10 })
    for (const conversation of server.conversations) append(conversation, 15)
    const whole = (await night(server, client, first.checkpoint, { limit: 10 })).ids
    const run = client.conversations.messages.listNew({ checkpoint: first.checkpoint, limit: 10 })
    const pieces: string[] = []
    for await (const message of run) {
      pieces.push(message.id)
      if (pieces.length === stopAt) break
    }
    const saved = JSON.parse(JSON.stringify(run.checkpoint())) as MessagesCheckpoint
    pieces.push(...(await night(server, client, saved, { limit: 10 })).ids)
    return { whole, pieces }
  }

  it.each([
    ['mid-page', 4],
    ['at a page boundary', 7], // the first conversation's new messages 23..29 end page 3
    ['at a conversation boundary', 15],
    ['before anything', 0],
    ['in the last conversation', 70],
  ])('taken %s and resumed: no gap, no duplicate', async (_where, stopAt) => {
    const { whole, pieces } = await interruptedNight(stopAt)
    expect(whole).toHaveLength(75)
    expect(pieces).toEqual(whole)
  })

  it('a checkpoint taken mid-run does not change as the run goes on (a snapshot)', async () => {
    const { server, client } = await serve([5, 5])
    const run = client.conversations.messages.listNew({})
    const iterator = run[Symbol.asyncIterator]()
    await iterator.next()
    const snapshot = run.checkpoint()
    const copy = JSON.stringify(snapshot)
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) {
      // drain
    }
    expect(JSON.stringify(snapshot)).toBe(copy)
    expect(run.checkpoint()).not.toEqual(snapshot)
    expect(server.requests.length).toBeGreaterThan(0)
  })
})

describe('several checkpoints, and shards', () => {
  it('an array of checkpoints merges per conversation: the one that read further wins', async () => {
    const { server, client } = await serve([4, 4])
    const first = await night(server, client, undefined)
    const [a, b] = server.conversations as [ModelConversation, ModelConversation]
    const older = checkpointOf({ c000: [2, a.messages[1] as string, '2024-06-01T00:00:00.000Z'] })
    const onlyB = checkpointOf({ c001: entryOf(first.checkpoint, 'c001') as [number, string, string] })
    const added = append(b, 1)
    // The one that read further comes first: order must not decide (the last one given does not win).
    const second = await night(server, client, [first.checkpoint, older, onlyB])
    expect(second.ids).toEqual(added)
    expect(entryOf(second.checkpoint, 'c000')).toEqual(entryOf(first.checkpoint, 'c000'))
  })

  it('shards are disjoint, cover every conversation, hold only their own conversations, and merge into one checkpoint even when the count changes', async () => {
    const sizes = Array.from({ length: 60 }, (_, i) => 1 + (i % 4))
    const { server, client } = await serve(sizes)
    const count = 3
    const firsts = await Promise.all(
      Array.from({ length: count }, (_, index) => night(server, client, undefined, { shard: { index, count } })),
    )
    const all = server.conversations.flatMap((c) => c.messages)
    expect(firsts.flatMap((n) => n.ids).sort()).toEqual([...all].sort())
    firsts.forEach((n, index) => {
      expect(n.checkpoint.conversations.every((id) => shardOf(id, count) === index)).toBe(true)
    })
    // The next night, over 4 shards instead of 3, from the 3 checkpoints merged.
    const added = server.conversations.filter((_, i) => i % 9 === 0).flatMap((c) => append(c, 2))
    const seconds = await Promise.all(
      Array.from({ length: 4 }, (_, index) =>
        night(
          server,
          client,
          firsts.map((n) => n.checkpoint),
          { shard: { index, count: 4 } },
        ),
      ),
    )
    expect(seconds.flatMap((n) => n.ids).sort()).toEqual([...added].sort())
  })
})

describe('checkpoint({ compact: true })', () => {
  it('keeps each last message id as a 53-bit fingerprint; the next night reads exactly what is new, and still sees a last message that moved', async () => {
    const { server, client } = await serve([5, 30, 0, 12])
    const first = client.conversations.messages.listNew({ limit: 10 })
    await drain(first)
    const compact = JSON.parse(JSON.stringify(first.checkpoint({ compact: true }))) as MessagesCheckpoint
    const full = first.checkpoint()
    expect(compact.conversations).toEqual(full.conversations)
    const kinds = Object.fromEntries(compact.conversations.map((id, i) => [id, typeof compact.lastMessageIds[i]]))
    expect(kinds).toEqual({ c000: 'number', c001: 'number', c002: 'object', c003: 'number' }) // c002 is empty: null
    expect(compact.lastMessageIds.every((id) => id === null || (Number.isSafeInteger(id) && (id as number) >= 0))).toBe(true)

    const [a, b, , d] = server.conversations as [ModelConversation, ModelConversation, ModelConversation, ModelConversation]
    const added = [...append(a, 2), ...append(d, 9)]
    b.messages.splice(3, 1) // one deleted before the last read, and two added: the fingerprint no longer matches
    append(b, 2)
    const second = await night(server, client, compact, { limit: 10 })
    expect(second.ids).toEqual([...added.slice(0, 2), ...b.messages, ...added.slice(2)])
    expect(second.run.summary).toMatchObject({ new: 0, grown: 2, unchanged: 1, rewound: ['c001'], deleted: [] })
    expect(() => second.run.checkpoint({ compact: 'yes' as unknown as boolean })).toThrow(RequestValidationError)
    expect(() => second.run.checkpoint(null as unknown as { compact: boolean })).toThrow(RequestValidationError)
    // A misspelt option would write the full form without a word.
    expect(() => second.run.checkpoint({ compakt: true } as unknown as { compact: boolean })).toThrow(/options\.compakt|compakt/)
    const third = await night(server, client, second.run.checkpoint({ compact: true }), { limit: 10 })
    expect(third.ids).toEqual([])
    expect(messagePages(third.requests)).toEqual([])
  })
})

describe('the first checkpoint format', () => {
  it('a checkpoint of the first format (an object keyed by conversation id, version 1) is still read, alone or with others', async () => {
    const { server, client } = await serve([5, 7, 0])
    const first = await night(server, client, undefined, { limit: 3 })
    const conversations = Object.fromEntries(first.checkpoint.conversations.map((id) => [id, entryOf(first.checkpoint, id)]))
    const firstFormat = { version: 1, conversations } as unknown as MessagesCheckpoint
    const [a, b] = server.conversations as [ModelConversation, ModelConversation]
    const added = [...append(a, 2), ...append(b, 4)]
    const second = await night(server, client, firstFormat, { limit: 3 })
    expect(second.ids).toEqual(added)
    expect(second.run.summary).toMatchObject({ new: 0, grown: 2, unchanged: 1, rewound: [], deleted: [] })
    expect(second.checkpoint.version).toBe(2)
    const third = await night(server, client, [firstFormat, second.checkpoint], { limit: 3 })
    expect(third.ids).toEqual([])
  })
})

describe('a malformed checkpoint is refused before anything is sent', () => {
  it.each<[string, unknown]>([
    ['not an object', 'cp'],
    ['another version', { version: 3, conversations: [], read: [], lastMessageIds: [], updatedAt: [] }],
    ['no conversations', { version: 2, read: [], lastMessageIds: [], updatedAt: [] }],
    [
      'a column shorter than conversations',
      { version: 2, conversations: ['c1', 'c2'], read: [1, 1], lastMessageIds: ['m'], updatedAt: ['t', 't'] },
    ],
    ['a column that is not an array', { version: 2, conversations: ['c1'], read: 1, lastMessageIds: ['m'], updatedAt: ['t'] }],
    ['an empty conversation id', { version: 2, conversations: [''], read: [0], lastMessageIds: [null], updatedAt: ['t'] }],
    ['a negative read', { version: 2, conversations: ['c1'], read: [-1], lastMessageIds: [null], updatedAt: ['t'] }],
    ['read > 0 without a message id', { version: 2, conversations: ['c1'], read: [3], lastMessageIds: [null], updatedAt: ['t'] }],
    ['read 0 with a message id', { version: 2, conversations: ['c1'], read: [0], lastMessageIds: ['m'], updatedAt: ['t'] }],
    ['an updatedAt that is not a string', { version: 2, conversations: ['c1'], read: [0], lastMessageIds: [null], updatedAt: [1] }],
    ['an empty array of checkpoints (a first run passes none)', []],
    // eslint-disable-next-line no-sparse-arrays -- a shard whose checkpoint file was missing
    ['a hole in an array of checkpoints', [, { version: 2, conversations: ['c1'], read: [0], lastMessageIds: [null], updatedAt: ['t'] }]],
    ['the first format: no conversations', { version: 1 }],
    ['the first format: an entry that is not a triple', { version: 1, conversations: { c1: [1, 'm'] } }],
    ['the first format: read 0 with a message id', { version: 1, conversations: { c1: [0, 'm', 't'] } }],
    [
      'one bad checkpoint in an array',
      [
        { version: 2, conversations: [], read: [], lastMessageIds: [], updatedAt: [] },
        { version: 2, conversations: ['c1'], read: [1.5], lastMessageIds: ['m'], updatedAt: ['t'] },
      ],
    ],
  ])('%s', async (_what, checkpoint) => {
    const { server, client } = await serve([1])
    let error: unknown
    try {
      client.conversations.messages.listNew({ checkpoint: checkpoint as MessagesCheckpoint })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(RequestValidationError)
    expect((error as RequestValidationError).issues[0]?.path[0]).toBe('checkpoint')
    expect(server.requests).toHaveLength(0)
  })

  it('reports the first 10 problems of every checkpoint of an array, and how many more', async () => {
    const { server, client } = await serve([1])
    const bad = (id: string): MessagesCheckpoint => checkpointOf({ [id]: [1, null, 't'] })
    let error: unknown
    try {
      client.conversations.messages.listNew({ checkpoint: Array.from({ length: 12 }, (_, i) => bad(`c${i}`)) })
    } catch (caught) {
      error = caught
    }
    const issues = (error as RequestValidationError).issues
    expect(issues.slice(0, 10).map((issue) => issue.path.slice(0, 2))).toEqual(Array.from({ length: 10 }, (_, i) => ['checkpoint', i]))
    expect(issues.at(-1)?.message).toBe('and 2 more malformed entries')
    expect(server.requests).toHaveLength(0)
  })

  it('bad params and shards are refused at once too', () => {
    const client = new ChatServiceClient({ baseUrl: 'http://127.0.0.1:9', ...KEY })
    expect(() => client.conversations.messages.listNew({ limit: 0 })).toThrow(RequestValidationError)
    expect(() => client.conversations.messages.listNew({ shard: { index: 3, count: 3 } })).toThrow(RequestValidationError)
    expect(() => client.conversations.messages.listNew({ shard: { index: 0.5, count: 2 } })).toThrow(RequestValidationError)
    expect(() => client.conversations.messages.listNew({ shard: { index: 0, count: 0 } })).toThrow(RequestValidationError)
    void client.close()
  })
})

describe('a conversation list that shifts while it is read', () => {
  it('scans again when a conversation is created at the front during the scan, and reads the one the first pass missed', async () => {
    const sizes = Array.from({ length: 150 }, () => 1)
    const { server, client } = await serve(sizes)
    const first = await night(server, client, undefined)
    // Once page 1 of the list has been answered, a conversation appears at the front: page 2 repeats
    // the last one of page 1, and the first pass never lists the new one.
    let inserted = false
    server.onAnswered((request) => {
      if (!inserted && request.kind === 'conversations' && request.page === 1) {
        inserted = true
        addConversation(server.conversations, 'a-new', 2, 0)
      }
    })
    const logger = recordingLogger()
    const tolerant = client.withOptions({ logger })
    const run = tolerant.conversations.messages.listNew({ checkpoint: first.checkpoint, concurrency: 1 })
    const ids = await drain(run)
    expect(ids).toEqual(['a-new-m0000', 'a-new-m0001'])
    expect(run.summary).toMatchObject({ new: 1, unchanged: 150, deleted: [], scans: 2, complete: true })
    // Page 2 repeated the last conversation of page 1 (total 151): the list moved, so a second scan found the new one.
    expect(run.summary?.repairs.conversations).toEqual({ scans: 2, shifts: 1, rereads: 0, recovered: 1, repeated: 1 })
    expect(logger.messages('warn')).toEqual([expect.stringContaining('the conversation list: the list moved while it was read (1 time)')])
  })
})

describe('messageIdFingerprint', () => {
  it('is pinned: compact checkpoints keep it, so it must never change within a major version', () => {
    expect(messageIdFingerprint('msg_0000001')).toBe(285456739082407)
    expect(messageIdFingerprint('msg_7f3c1e2a-9b4d-4c8e-a1f0-2d6b8e9c0a13')).toBe(7009765573100616)
    expect(messageIdFingerprint('é😀')).toBe(2572895727947248)
    expect(messageIdFingerprint('')).toBe(5164705341406219)
  })

  it('spreads ids over 53 bits: 100,000 similar ids, no two alike, every one a safe integer', () => {
    const seen = new Set<number>()
    let unsafe = 0
    for (let i = 0; i < 100_000; i++) {
      const fingerprint = messageIdFingerprint(`msg_${String(i).padStart(7, '0')}`)
      if (!Number.isSafeInteger(fingerprint) || fingerprint < 0) unsafe++
      seen.add(fingerprint)
    }
    expect(unsafe).toBe(0)
    expect(seen.size).toBe(100_000)
  })
})
