/**
 * Lists that move while they are read (`FakeChatService.moveList`, `POST /__fake/list-moves`): on
 * a schedule (when page p is asked, or on every k-th request of a list), records are deleted
 * from and inserted into the list before the request is answered, so that a client's listing can
 * be tested against the shifts of page-number paging.
 *
 * Inserted records take their place in list order (`created_at`, then `id`, state.ts) by the
 * `created_at` (and, where two neighbours share a timestamp, the `id`) they are given; a position
 * that no such value can reach (neighbours with the same timestamp and ids with no string
 * between them) moves one place on. Inputs are `unknown`: they come from JavaScript tests and from
 * JSON sent to the control endpoints, and are checked here before the move is added.
 *
 * @module
 */
import { appendMessages, deleteMessage, FakeDataError, messageIdsOf } from './changes.ts'
import { mulberry32 } from './dataset.ts'
import { SortedList } from './sorted-list.ts'
import { byCreatedThenId, type CompanyState, type ConversationState, type ServiceState } from './state.ts'
import type { ListMove, ListMoveChange, ListMoveHandle, ListPosition, MessageRecord, MovableList } from './types.ts'

/** Most records one side of a move deletes or inserts each time it fires (a guard against typos). */
const MAX_COUNT = 10_000

const LISTS: readonly MovableList[] = ['customerUsers', 'agents', 'conversations', 'messages']
/** The members of a move (the control endpoint takes these). */
export const MOVE_FIELDS: readonly string[] = ['list', 'when', 'delete', 'insert', 'times', 'companyId', 'conversationId', 'seed']

/** A checked move and what it has done. */
interface ActiveMove {
  readonly move: Readonly<ListMove>
  readonly count: (change: ListMoveChange | undefined) => number
  readonly random: () => number
  /** Matching list requests since the move was added. */
  requests: number
  fired: number
  readonly limit: number
}

/** The list being answered, as a move sees it. */
export interface ListRequest {
  readonly list: MovableList
  readonly company: CompanyState
  readonly page: number
  /** The conversation whose messages are asked for (`'messages'` only). */
  readonly conversation?: ConversationState | undefined
}

/** The moves of one fake: added by `moveList`, fired by the list handlers (endpoints.ts) before they answer. */
export class ListMoves {
  #moves: ActiveMove[] = []

  /**
   * Adds a move (see {@link ListMove}).
   * @throws FakeDataError (400) for a malformed move; nothing is added then.
   */
  add(input: unknown): ListMoveHandle {
    const move = checkMove(input)
    const random = mulberry32(move.seed ?? 1)
    const active: ActiveMove = {
      move,
      random,
      count: (change) => (change === undefined ? 0 : (change.count ?? 1)),
      requests: 0,
      fired: 0,
      limit: move.times ?? ('page' in move.when ? 1 : Number.POSITIVE_INFINITY),
    }
    this.#moves.push(active)
    return {
      get fired() {
        return active.fired
      },
      cancel: () => {
        this.#moves = this.#moves.filter((m) => m !== active)
      },
    }
  }

  /** Removes every move. */
  clear(): void {
    this.#moves = []
  }

  /** Fires the moves due for this request, in the order they were added. */
  beforePage(request: ListRequest, state: ServiceState, now: () => Date): void {
    for (const active of this.#moves) {
      const { move } = active
      if (move.list !== request.list || active.fired >= active.limit) continue
      if (move.companyId !== undefined && move.companyId !== request.company.id) continue
      if (move.conversationId !== undefined && move.conversationId !== request.conversation?.record.id) continue
      active.requests++
      const due = 'page' in move.when ? move.when.page === request.page : active.requests % move.when.every === 0
      if (!due) continue
      active.fired++
      const list = listOf(request, state, now)
      for (let i = 0; i < active.count(move.delete); i++) deleteAt(list, (move.delete as ListMoveChange).at, active.random)
      for (let i = 0; i < active.count(move.insert); i++) insertAt(list, (move.insert as ListMoveChange).at, active.random, now())
    }
  }
}

/** One list as a move changes it: its records in list order, and how to remove and add one. */
interface MovingList {
  readonly length: number
  /** `created_at` and `id` of the record at `index`. */
  key(index: number): { readonly created_at: string; readonly id: string }
  remove(index: number): void
  /** Adds a generated record with this `created_at`; `id` (when given) must be used, else one is generated. */
  add(createdAt: string, id: string | undefined): void
  /** A fresh id of this list, sorting after `after` when given (`undefined` when none can be made here). */
  newId(after?: string): string
}

function listOf(request: ListRequest, state: ServiceState, now: () => Date): MovingList {
  const { company } = request
  const fresh = (prefix: string, taken: (id: string) => boolean) => (after?: string) =>
    after === undefined ? state.newRecordId(prefix, taken) : state.newRecordId(`${after}-`, taken)
  switch (request.list) {
    case 'conversations': {
      const list = company.conversationList
      return {
        get length() {
          return list.length
        },
        key: (i) => (list.items()[i] as ConversationState).record,
        remove: (i) => {
          const conversation = list.items()[i] as ConversationState
          company.conversations.delete(conversation.record.id)
          list.remove(conversation)
          const ids = company.messageIds
          if (ids !== undefined) for (const message of conversation.messages.items()) ids.delete(message.id)
        },
        add: (createdAt, id) => {
          const conversationId = id ?? state.newRecordId('conv_fake', (c) => company.conversations.has(c))
          const user = company.userList.items()[0]
          const conversation: ConversationState = {
            record: {
              id: conversationId,
              title: `Inserted conversation ${conversationId}`,
              customer_user_id: user?.id ?? 'cu_fake_none',
              created_at: createdAt,
              updated_at: createdAt,
            },
            declaredCount: 0,
            messages: new SortedList<MessageRecord>(byCreatedThenId),
          }
          company.conversations.set(conversationId, conversation)
          list.add(conversation)
        },
        newId: fresh('conv_fake', (c) => company.conversations.has(c)),
      }
    }
    case 'customerUsers': {
      const list = company.userList
      return {
        get length() {
          return list.length
        },
        key: (i) => list.items()[i] as { created_at: string; id: string },
        remove: (i) => {
          const user = list.items()[i]
          if (user === undefined) return
          company.users.delete(user.id)
          company.usersByExternalId.delete(user.external_id)
          list.remove(user)
        },
        add: (createdAt, id) => {
          const userId = id ?? state.newUserId(company)
          state.addUser(company, {
            id: userId,
            external_id: state.newRecordId('ext_fake', (e) => company.usersByExternalId.has(e)),
            name: `Inserted user ${userId}`,
            email: null,
            metadata: {},
            active: true,
            created_at: createdAt,
            last_seen_at: createdAt,
            updated_at: createdAt,
          })
        },
        newId: (after) => (after === undefined ? state.newUserId(company) : state.newRecordId(`${after}-`, (u) => company.users.has(u))),
      }
    }
    case 'agents': {
      const list = company.agentList
      return {
        get length() {
          return list.length
        },
        key: (i) => list.items()[i] as { created_at: string; id: string },
        remove: (i) => {
          const agent = list.items()[i]
          if (agent === undefined) return
          company.agents.delete(agent.id)
          list.remove(agent)
        },
        add: (createdAt, id) => {
          const agentId = id ?? state.newRecordId('agent_fake', (a) => company.agents.has(a))
          const agent = { id: agentId, name: `Inserted agent ${agentId}`, active: true, created_at: createdAt, updated_at: createdAt }
          company.agents.set(agentId, agent)
          list.add(agent)
        },
        newId: fresh('agent_fake', (a) => company.agents.has(a)),
      }
    }
    case 'messages': {
      const conversation = request.conversation as ConversationState
      const list = conversation.messages
      const conversationId = conversation.record.id
      const taken = (m: string): boolean => messageIdsOf(company).has(m)
      return {
        get length() {
          return list.length
        },
        key: (i) => list.items()[i] as { created_at: string; id: string },
        remove: (i) => {
          const message = list.items()[i]
          if (message !== undefined) deleteMessage(state, now(), company.id, conversationId, message.id)
        },
        add: (createdAt, id) => {
          const role = list.length % 2 === 0 ? 'user' : 'assistant'
          const messageId = id ?? state.newRecordId('msg_fake', taken)
          appendMessages(state, now(), company.id, conversationId, [
            { id: messageId, content: `Inserted message ${messageId}`, role, created_at: createdAt },
          ])
        },
        newId: fresh('msg_fake', taken),
      }
    }
  }
}

function indexOf(list: MovingList, at: ListPosition, random: () => number, inserting: boolean): number {
  const last = inserting ? list.length : list.length - 1
  if (at === 'front') return 0
  if (at === 'end') return last
  if (at === 'random') return Math.floor(random() * (last + 1))
  return Math.min(at, last)
}

function deleteAt(list: MovingList, at: ListPosition, random: () => number): void {
  if (list.length === 0) return
  list.remove(indexOf(list, at, random, false))
}

function insertAt(list: MovingList, at: ListPosition, random: () => number, now: Date): void {
  for (let index = indexOf(list, at, random, true); index <= list.length; index++) {
    const placed = placement(list, index, now)
    if (placed !== undefined) {
      list.add(placed.created_at, placed.id)
      return
    }
  }
}

/**
 * The `created_at` (and `id`, when the neighbours leave no time between them) that puts a new
 * record at `index`; `undefined` when none can.
 */
function placement(list: MovingList, index: number, now: Date): { created_at: string; id: string | undefined } | undefined {
  const previous = index > 0 ? list.key(index - 1) : undefined
  const next = index < list.length ? list.key(index) : undefined
  const at = (ms: number): string => new Date(ms).toISOString()
  const before = previous === undefined ? Number.NaN : Date.parse(previous.created_at)
  const after = next === undefined ? Number.NaN : Date.parse(next.created_at)
  if (previous === undefined) return { created_at: Number.isNaN(after) ? now.toISOString() : at(after - 1000), id: undefined }
  if (Number.isNaN(before)) return undefined
  if (next === undefined) return { created_at: at(Math.max(now.getTime(), before + 1)), id: undefined }
  if (Number.isNaN(after)) return undefined
  if (after - before >= 2) return { created_at: at(before + Math.floor((after - before) / 2)), id: undefined }
  // No whole millisecond between them: the previous record's own timestamp, and an id after its id.
  const id = list.newId(previous.id)
  if (after > before || id < next.id) return { created_at: previous.created_at, id }
  return undefined
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isWhole(value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max
}

/** A checked copy of a {@link ListMove}. */
function checkMove(input: unknown): ListMove {
  const bad = (message: string): FakeDataError => new FakeDataError(400, `moveList: ${message}`)
  if (!isRecord(input)) throw bad('a move must be an object ({ list, when, delete?, insert? })')
  const unknown = Object.keys(input).filter((name) => !MOVE_FIELDS.includes(name))
  if (unknown.length > 0)
    throw bad(`unknown member ${unknown.map((n) => JSON.stringify(n)).join(', ')} (a move has ${MOVE_FIELDS.join(', ')})`)
  const { list, when, times, companyId, conversationId, seed } = input
  if (typeof list !== 'string' || !LISTS.includes(list as MovableList)) throw bad(`list must be one of ${LISTS.join(', ')}`)
  let checkedWhen: ListMove['when']
  if (isRecord(when) && Object.keys(when).length === 1 && isWhole(when['page'], 1)) checkedWhen = { page: when['page'] }
  else if (isRecord(when) && Object.keys(when).length === 1 && isWhole(when['every'], 1)) checkedWhen = { every: when['every'] }
  else throw bad('when must be { page: p } or { every: k } (whole numbers of at least 1)')
  const change = (name: 'delete' | 'insert'): ListMoveChange | undefined => {
    const value = input[name]
    if (value === undefined) return undefined
    if (!isRecord(value) || Object.keys(value).some((k) => k !== 'at' && k !== 'count')) throw bad(`${name} must be { at, count? }`)
    const { at, count } = value
    if (at !== 'front' && at !== 'end' && at !== 'random' && !isWhole(at, 0)) {
      throw bad(`${name}.at must be 'front', 'end', 'random' or an index (a whole number of at least 0)`)
    }
    if (count !== undefined && !isWhole(count, 1, MAX_COUNT)) throw bad(`${name}.count must be a whole number from 1 to ${MAX_COUNT}`)
    return { at, ...(count === undefined ? {} : { count }) }
  }
  const deleting = change('delete')
  const inserting = change('insert')
  if (deleting === undefined && inserting === undefined) throw bad('a move needs delete, insert or both')
  if (times !== undefined && !isWhole(times, 1)) throw bad('times must be a whole number of at least 1')
  if (companyId !== undefined && typeof companyId !== 'string') throw bad('companyId must be a string')
  if (conversationId !== undefined && (typeof conversationId !== 'string' || list !== 'messages')) {
    throw bad("conversationId must be a string, and only for list 'messages'")
  }
  if (seed !== undefined && (typeof seed !== 'number' || !Number.isFinite(seed))) throw bad('seed must be a finite number')
  return {
    list: list as MovableList,
    when: checkedWhen,
    ...(deleting === undefined ? {} : { delete: deleting }),
    ...(inserting === undefined ? {} : { insert: inserting }),
    ...(times === undefined ? {} : { times }),
    ...(companyId === undefined ? {} : { companyId }),
    ...(conversationId === undefined ? {} : { conversationId }),
    ...(seed === undefined ? {} : { seed }),
  }
}
