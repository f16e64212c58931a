/**
 * The fake's in-memory data: companies, their API keys and records.
 *
 * Every record belongs to exactly one company; lookups always go through a
 * company, so another company's records are simply absent (spec: "a record of
 * another company is treated as nonexistent").
 *
 * List order (spec: "not shown"): every list is ordered by `created_at`
 * ascending, then `id` ascending (code-unit order). Messages use the same
 * order, which is the spec's "chronologically, oldest first".
 *
 * @module
 */
import { timingSafeEqual } from 'node:crypto'
import { SortedList } from './sorted-list.ts'
import type {
  AgentRecord,
  ApiKeySeed,
  CompanySeed,
  ConversationSeed,
  CustomerUserSeed,
  MessageRecord,
  StoredCustomerUser,
} from './types.ts'

/** A conversation as held by the fake. */
export interface ConversationState {
  readonly record: Omit<ConversationSeed, 'message_count'>
  /** `message_count` given in the seed, used while no message is known. */
  declaredCount: number
  /** Messages of this conversation, oldest first (references to seed objects). */
  readonly messages: SortedList<MessageRecord>
}

/** One company's data. The maps look records up by id; the lists hold them in list order. */
export interface CompanyState {
  readonly id: string
  name: string | undefined
  /** Key pairs in seeding order. */
  readonly keys: ApiKeySeed[]
  readonly users: Map<string, StoredCustomerUser>
  readonly usersByExternalId: Map<string, StoredCustomerUser>
  readonly agents: Map<string, AgentRecord>
  readonly conversations: Map<string, ConversationState>
  readonly userList: SortedList<StoredCustomerUser>
  readonly agentList: SortedList<AgentRecord>
  readonly conversationList: SortedList<ConversationState>
  /**
   * Every message id of the company, built on first use by changes.ts (appending needs unique
   * ids) and kept up to date from then on; `undefined` until then, so that seeding a million
   * messages does not pay for an index no test uses.
   */
  messageIds: Set<string> | undefined
}

/** Compares two ISO 8601 timestamps chronologically (falls back to text order). */
export function compareIso(a: string, b: string): number {
  if (a.length === b.length && a.endsWith('Z') && b.endsWith('Z')) return a < b ? -1 : a > b ? 1 : 0
  const ta = Date.parse(a)
  const tb = Date.parse(b)
  if (!Number.isNaN(ta) && !Number.isNaN(tb) && ta !== tb) return ta - tb
  return a < b ? -1 : a > b ? 1 : 0
}

/** List order: `created_at` (chronologically), then `id` (code-unit order). */
export function byCreatedThenId(a: { created_at: string; id: string }, b: { created_at: string; id: string }): number {
  return compareIso(a.created_at, b.created_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
}

const byConversation = (a: ConversationState, b: ConversationState): number => byCreatedThenId(a.record, b.record)

function seedError(message: string): Error {
  return new Error(`chat-service-sdk/testing: invalid seed: ${message}`)
}

function requireId(kind: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw seedError(`${kind} id must be a non-empty string`)
  return value
}

/*
 * Seeds come from user code, often plain JavaScript or JSON files, so `seed()`
 * takes them as `unknown` and #validate reads them defensively: an entry that
 * is not an object reads as `{}`, and an omitted (`undefined`/`null`) list is
 * empty (JavaScript callers may omit even `keys`).
 */

/** The fields of a seed entry; a non-object reads as `{}`. */
function fieldsOf(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {}
}

/** A seed list; `undefined` and `null` read as `[]`. */
function listOf(kind: string, value: unknown): readonly unknown[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) throw seedError(`${kind} must be an array`)
  return value
}

/** A company seed as #validate lets it through: `keys` and a user's `metadata` may be omitted. */
type CheckedCompanySeed = Omit<CompanySeed, 'keys' | 'customerUsers'> & {
  keys?: ApiKeySeed[] | null
  customerUsers?: (Omit<CustomerUserSeed, 'metadata'> & { metadata?: Record<string, unknown> | null })[] | null
}

/** All data of one fake service instance. */
export class ServiceState {
  readonly companies = new Map<string, CompanyState>()
  readonly keys = new Map<string, { companyId: string; keySecret: string }>()
  #userCounter = 0
  #messageCounter = 0
  /** Counters of the ids `newRecordId` makes, by prefix. */
  readonly #recordCounters = new Map<string, number>()

  /** Removes everything. */
  clear(): void {
    this.companies.clear()
    this.keys.clear()
    this.#userCounter = 0
    this.#messageCounter = 0
    this.#recordCounters.clear()
  }

  /**
   * Adds the seed's companies, keys and records. Duplicate ids, a `keyId`
   * already used with another secret or company, and messages of an unknown
   * conversation throw, and then nothing of the seed is applied.
   */
  seed(data: unknown): void {
    if (data === null || typeof data !== 'object' || !('companies' in data) || !Array.isArray(data.companies)) {
      throw seedError('expected { companies: [...] }')
    }
    const companies: readonly unknown[] = data.companies
    this.#validate(companies)
    for (const company of companies as readonly CheckedCompanySeed[]) this.#seedCompany(company)
  }

  #validate(companies: readonly unknown[]): void {
    const keys = new Map<string, { companyId: string; keySecret: string }>()
    const seen = new Map<string, { users: Set<string>; externals: Set<string>; agents: Set<string>; conversations: Set<string> }>()
    for (const entry of companies) {
      const seed = fieldsOf(entry)
      const companyId = requireId('company', seed.id)
      const existing = this.companies.get(companyId)
      let ids = seen.get(companyId)
      if (!ids) {
        ids = { users: new Set(), externals: new Set(), agents: new Set(), conversations: new Set() }
        seen.set(companyId, ids)
      }
      for (const keyEntry of listOf('keys', seed.keys)) {
        const key = fieldsOf(keyEntry)
        const keyId = requireId('key', key.keyId)
        if (typeof key.keySecret !== 'string' || key.keySecret === '') throw seedError(`key ${keyId}: keySecret must be a non-empty string`)
        const known = keys.get(keyId) ?? this.keys.get(keyId)
        if (known && (known.companyId !== companyId || known.keySecret !== key.keySecret)) {
          throw seedError(`key ${keyId} is already registered`)
        }
        keys.set(keyId, { companyId, keySecret: key.keySecret })
      }
      for (const agent of listOf('agents', seed.agents)) {
        const id = requireId('agent', fieldsOf(agent).id)
        if (ids.agents.has(id) || existing?.agents.has(id)) throw seedError(`duplicate agent id ${id} in company ${companyId}`)
        ids.agents.add(id)
      }
      for (const userEntry of listOf('customerUsers', seed.customerUsers)) {
        const user = fieldsOf(userEntry)
        const id = requireId('customer user', user.id)
        if (ids.users.has(id) || existing?.users.has(id)) throw seedError(`duplicate customer user id ${id} in company ${companyId}`)
        if (typeof user.external_id !== 'string') throw seedError(`customer user ${id}: external_id must be a string`)
        if (ids.externals.has(user.external_id) || existing?.usersByExternalId.has(user.external_id)) {
          throw seedError(`duplicate customer user external_id ${user.external_id} in company ${companyId}`)
        }
        ids.users.add(id)
        ids.externals.add(user.external_id)
      }
      for (const conversation of listOf('conversations', seed.conversations)) {
        const id = requireId('conversation', fieldsOf(conversation).id)
        if (ids.conversations.has(id) || existing?.conversations.has(id)) {
          throw seedError(`duplicate conversation id ${id} in company ${companyId}`)
        }
        ids.conversations.add(id)
      }
      const messages = listOf('messages', seed.messages)
      let lastOk: string | undefined
      for (let i = 0; i < messages.length; i++) {
        const message = fieldsOf(messages[i])
        const conversationId = message.conversation_id
        if (lastOk !== undefined && conversationId === lastOk) continue
        if (
          typeof conversationId !== 'string' ||
          (!ids.conversations.has(conversationId) && !existing?.conversations.has(conversationId))
        ) {
          throw seedError(`message ${String(message.id)} refers to unknown conversation ${String(conversationId)} of company ${companyId}`)
        }
        lastOk = conversationId
      }
    }
  }

  /** Applies one company's seed (validated by #validate). */
  #seedCompany(seed: CheckedCompanySeed): void {
    const companyId = seed.id
    let company = this.companies.get(companyId)
    if (!company) {
      company = {
        id: companyId,
        name: seed.name,
        users: new Map(),
        usersByExternalId: new Map(),
        agents: new Map(),
        conversations: new Map(),
        keys: [],
        userList: new SortedList<StoredCustomerUser>(byCreatedThenId),
        agentList: new SortedList<AgentRecord>(byCreatedThenId),
        conversationList: new SortedList<ConversationState>(byConversation),
        messageIds: undefined,
      }
      this.companies.set(companyId, company)
    } else if (seed.name !== undefined) {
      company.name = seed.name
    }
    for (const key of seed.keys ?? []) {
      if (!this.keys.has(key.keyId)) company.keys.push({ keyId: key.keyId, keySecret: key.keySecret })
      this.keys.set(key.keyId, { companyId, keySecret: key.keySecret })
    }
    for (const agent of seed.agents ?? []) {
      const copy: AgentRecord = {
        id: agent.id,
        name: agent.name,
        active: agent.active,
        created_at: agent.created_at,
        updated_at: agent.updated_at,
      }
      company.agents.set(copy.id, copy)
      company.agentList.add(copy)
    }
    for (const user of seed.customerUsers ?? []) {
      this.addUser(company, {
        id: user.id,
        external_id: user.external_id,
        name: user.name,
        email: user.email,
        metadata: structuredClone(user.metadata ?? {}),
        active: user.active,
        created_at: user.created_at,
        last_seen_at: user.last_seen_at,
        updated_at: user.updated_at ?? user.created_at,
      })
    }
    for (const conversation of seed.conversations ?? []) {
      const state: ConversationState = {
        record: {
          id: conversation.id,
          title: conversation.title,
          customer_user_id: conversation.customer_user_id,
          created_at: conversation.created_at,
          updated_at: conversation.updated_at,
        },
        declaredCount: conversation.message_count ?? 0,
        messages: new SortedList<MessageRecord>(byCreatedThenId),
      }
      company.conversations.set(state.record.id, state)
      company.conversationList.add(state)
    }
    const messages = seed.messages ?? []
    let last: ConversationState | undefined
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i] as MessageRecord
      const conversation =
        last !== undefined && last.record.id === message.conversation_id
          ? last
          : (company.conversations.get(message.conversation_id) as ConversationState)
      conversation.messages.add(message)
      company.messageIds?.add(message.id)
      last = conversation
    }
  }

  /** Adds a user record (already validated) to a company. */
  addUser(company: CompanyState, user: StoredCustomerUser): void {
    company.users.set(user.id, user)
    company.usersByExternalId.set(user.external_id, user)
    company.userList.add(user)
  }

  /** A fresh internal customer-user id, unique within the company. */
  newUserId(company: CompanyState): string {
    let id: string
    do {
      this.#userCounter++
      id = `cu_fake_${String(this.#userCounter).padStart(6, '0')}`
    } while (company.users.has(id))
    return id
  }

  /** A fresh message id (`msg_fake_000001`, …), not used in the company (`ids`: its message ids). */
  newMessageId(ids: ReadonlySet<string>): string {
    let id: string
    do {
      this.#messageCounter++
      id = `msg_fake_${String(this.#messageCounter).padStart(6, '0')}`
    } while (ids.has(id))
    return id
  }

  /** A fresh id `<prefix>_000001`, … for which `taken` answers false (records a list move inserts). */
  newRecordId(prefix: string, taken: (id: string) => boolean): string {
    let n = this.#recordCounters.get(prefix) ?? 0
    let id: string
    do {
      n++
      id = `${prefix}_${String(n).padStart(6, '0')}`
    } while (taken(id))
    this.#recordCounters.set(prefix, n)
    return id
  }

  /** The company a key pair authenticates as, or `undefined`. */
  authenticate(keyId: unknown, keySecret: unknown): CompanyState | undefined {
    if (typeof keyId !== 'string' || typeof keySecret !== 'string') return undefined
    const key = this.keys.get(keyId)
    if (!key) return undefined
    const a = Buffer.from(keySecret)
    const b = Buffer.from(key.keySecret)
    if (a.length !== b.length || !timingSafeEqual(a, b)) return undefined
    return this.companies.get(key.companyId)
  }

  /** The first company in insertion order. */
  firstCompany(): CompanyState | undefined {
    return this.companies.values().next().value
  }
}

/** `message_count` as reported: the number of known messages, else the seeded count. */
export function messageCount(conversation: ConversationState): number {
  return conversation.messages.length > 0 ? conversation.messages.length : conversation.declaredCount
}

/**
 * The next value of an `updated_at`: `now`, or 1 ms after `previous` when `now` is not later (a
 * frozen or slow clock), and never before `atLeast` (e.g. the newest message's `created_at`). So
 * an `updated_at` strictly increases with every change, and a client can order changes by it.
 */
export function nextUpdatedAt(previous: string, now: Date, atLeast?: string): string {
  let ms = now.getTime()
  const before = Date.parse(previous)
  if (!Number.isNaN(before) && ms <= before) ms = before + 1
  const floor = atLeast === undefined ? Number.NaN : Date.parse(atLeast)
  if (!Number.isNaN(floor) && ms < floor) ms = floor
  return new Date(ms).toISOString()
}
