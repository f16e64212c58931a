/**
 * Data that changes between runs: appending messages to a conversation, deleting a message,
 * deleting a conversation (`FakeChatService.appendMessages`, `deleteMessage`, `deleteConversation`,
 * and the control endpoint `POST /__fake/append-messages`). Each change moves the conversation's
 * `message_count` and `updated_at` as the service would, so that a nightly job can be tested
 * across runs.
 *
 * The spec shows no operation that creates or deletes messages or conversations, so what a change
 * does to the other fields is the fake's reading of the Conversation table: `message_count` is the
 * number of messages, `updated_at` the time of the last update. TESTING.md lists these choices.
 *
 * Inputs are `unknown`: they come from JavaScript tests and from JSON sent to the control
 * endpoints, and are checked here, all of them before anything changes.
 *
 * @module
 */
import { byCreatedThenId, nextUpdatedAt, type CompanyState, type ConversationState, type ServiceState } from './state.ts'
import type { MessageRecord } from './types.ts'

/**
 * Bad input to a change: `status` is what the control endpoints answer (400 for a malformed
 * argument, 404 for an unknown company, conversation or message).
 */
export class FakeDataError extends Error {
  readonly status: 400 | 404

  constructor(status: 400 | 404, message: string) {
    super(`chat-service-sdk/testing: ${message}`)
    this.status = status
  }
}

/** Most messages one call appends (a guard against a typo such as 1e9, not a spec limit). */
export const MAX_APPEND = 1_000_000

/** An ISO 8601 date-time with a time zone, as every timestamp of the service. */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/

function companyOf(state: ServiceState, op: string, companyId: unknown): CompanyState {
  if (typeof companyId !== 'string') throw new FakeDataError(400, `${op}: companyId must be a string`)
  const company = state.companies.get(companyId)
  if (!company) {
    const known = [...state.companies.keys()]
    throw new FakeDataError(
      404,
      `${op}: unknown company ${companyId} (the fake has ${known.length > 0 ? known.slice(0, 5).join(', ') : 'none'}${known.length > 5 ? ', ...' : ''})`,
    )
  }
  return company
}

function conversationOf(
  state: ServiceState,
  op: string,
  companyId: unknown,
  conversationId: unknown,
): { company: CompanyState; conversation: ConversationState } {
  const company = companyOf(state, op, companyId)
  if (typeof conversationId !== 'string') throw new FakeDataError(400, `${op}: conversationId must be a string`)
  const conversation = company.conversations.get(conversationId)
  if (!conversation) throw new FakeDataError(404, `${op}: unknown conversation ${conversationId} in company ${company.id}`)
  return { company, conversation }
}

/** The company's message ids, indexed on first use (see `CompanyState.messageIds`). */
export function messageIdsOf(company: CompanyState): Set<string> {
  if (company.messageIds === undefined) {
    const ids = new Set<string>()
    for (const conversation of company.conversations.values()) for (const message of conversation.messages.items()) ids.add(message.id)
    company.messageIds = ids
  }
  return company.messageIds
}

/**
 * The conversation's held messages become the truth: a `message_count` seeded without messages
 * would otherwise come back once the last held message is deleted.
 */
function refuseDeclaredOnly(op: string, company: CompanyState, conversation: ConversationState): void {
  if (conversation.messages.length === 0 && conversation.declaredCount > 0) {
    throw new FakeDataError(
      400,
      `${op}: conversation ${conversation.record.id} in company ${company.id} was seeded with message_count ${conversation.declaredCount} ` +
        'but without its messages, so the fake cannot tell where new ones go: seed its messages (or message_count 0) first',
    )
  }
}

interface CheckedSeed {
  id: string | undefined
  content: string
  role: 'user' | 'assistant'
  created_at: string | undefined
}

function checkSeeds(op: string, conversationId: string, messages: readonly unknown[], ids: ReadonlySet<string>): CheckedSeed[] {
  const seen = new Set<string>()
  return messages.map((entry, i) => {
    const where = `${op}: messages[${i}]`
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new FakeDataError(400, `${where} must be an object`)
    const m = entry as Record<string, unknown>
    const { id, content, role, conversation_id: conversation, created_at: createdAt } = m
    if (id !== undefined) {
      if (typeof id !== 'string' || id === '') throw new FakeDataError(400, `${where}.id must be a non-empty string when given`)
      if (ids.has(id) || seen.has(id)) throw new FakeDataError(400, `${where}.id ${id} is already a message of the company`)
      seen.add(id)
    }
    if (typeof content !== 'string') throw new FakeDataError(400, `${where}.content must be a string`)
    if (role !== 'user' && role !== 'assistant') throw new FakeDataError(400, `${where}.role must be 'user' or 'assistant'`)
    if (conversation !== undefined && conversation !== conversationId) {
      throw new FakeDataError(400, `${where}.conversation_id must be ${conversationId} (the conversation appended to) when given`)
    }
    if (
      createdAt !== undefined &&
      (typeof createdAt !== 'string' || !ISO_DATE_TIME.test(createdAt) || Number.isNaN(Date.parse(createdAt)))
    ) {
      throw new FakeDataError(400, `${where}.created_at must be an ISO 8601 date-time such as 2024-01-01T00:00:00.000Z`)
    }
    return { id, content, role, created_at: createdAt }
  })
}

/** Text of a generated message: says where it came from, so a test's failure output is clear. */
const generatedContent = (id: string): string => `Appended message ${id}`

/**
 * Appends messages to a conversation (see `FakeChatService.appendMessages`): a count generates
 * them; seeds give their fields. Returns the stored messages (copies), in the order given.
 * @throws FakeDataError (400) for bad arguments, (404) for an unknown company or conversation;
 * then nothing changed.
 */
export function appendMessages(
  state: ServiceState,
  now: Date,
  companyId: unknown,
  conversationId: unknown,
  messages: unknown,
): MessageRecord[] {
  const op = 'appendMessages'
  const { company, conversation } = conversationOf(state, op, companyId, conversationId)
  const id = conversation.record.id
  let seeds: CheckedSeed[]
  if (typeof messages === 'number') {
    if (!Number.isSafeInteger(messages) || messages < 0 || messages > MAX_APPEND) {
      throw new FakeDataError(400, `${op}: a count of messages must be an integer from 0 to ${MAX_APPEND}`)
    }
    seeds = Array.from({ length: messages }, () => ({ id: undefined, content: '', role: 'user', created_at: undefined }))
  } else if (Array.isArray(messages)) {
    if (messages.length > MAX_APPEND) throw new FakeDataError(400, `${op}: at most ${MAX_APPEND} messages at once`)
    seeds = checkSeeds(op, id, messages, messageIdsOf(company))
  } else {
    throw new FakeDataError(400, `${op}: messages must be a count or an array of MessageSeed`)
  }
  if (seeds.length === 0) return []
  refuseDeclaredOnly(op, company, conversation)

  const ids = messageIdsOf(company)
  // Generated ids skip the ids given in this call too.
  const taken = new Set(ids)
  for (const seed of seeds) if (seed.id !== undefined) taken.add(seed.id)
  const held = conversation.messages.items()
  let newest = held.at(-1)
  const nowMs = now.getTime()
  const generated = typeof messages === 'number'
  const added: MessageRecord[] = []
  for (const seed of seeds) {
    const messageId = seed.id ?? state.newMessageId(taken)
    taken.add(messageId)
    let createdAt = seed.created_at
    if (createdAt === undefined) {
      const after = newest === undefined ? Number.NaN : Date.parse(newest.created_at) + 1
      createdAt = new Date(Number.isNaN(after) || nowMs >= after ? nowMs : after).toISOString()
    }
    const message: MessageRecord = {
      id: messageId,
      // A count alternates roles after the conversation's newest message (user first), as a chat does.
      content: generated ? generatedContent(messageId) : seed.content,
      role: generated ? (newest?.role === 'user' ? 'assistant' : 'user') : seed.role,
      conversation_id: id,
      created_at: createdAt,
    }
    added.push(message)
    if (newest === undefined || byCreatedThenId(message, newest) > 0) newest = message
  }
  for (const message of added) {
    conversation.messages.add(message)
    ids.add(message.id)
  }
  conversation.declaredCount = 0
  conversation.record.updated_at = nextUpdatedAt(conversation.record.updated_at, now, newest?.created_at)
  return added.map((m) => ({ ...m }))
}

/**
 * Deletes one message of a conversation (see `FakeChatService.deleteMessage`).
 * @throws FakeDataError (404) for an unknown company, conversation or message of that conversation.
 */
export function deleteMessage(state: ServiceState, now: Date, companyId: unknown, conversationId: unknown, messageId: unknown): void {
  const op = 'deleteMessage'
  const { company, conversation } = conversationOf(state, op, companyId, conversationId)
  if (typeof messageId !== 'string') throw new FakeDataError(400, `${op}: messageId must be a string`)
  const message = conversation.messages.items().find((m) => m.id === messageId)
  if (message === undefined) {
    throw new FakeDataError(404, `${op}: unknown message ${messageId} in conversation ${conversation.record.id} of company ${company.id}`)
  }
  conversation.messages.remove(message)
  company.messageIds?.delete(messageId)
  conversation.declaredCount = 0
  conversation.record.updated_at = nextUpdatedAt(conversation.record.updated_at, now)
}

/**
 * Deletes a conversation and its messages (see `FakeChatService.deleteConversation`).
 * @throws FakeDataError (404) for an unknown company or conversation.
 */
export function deleteConversation(state: ServiceState, companyId: unknown, conversationId: unknown): void {
  const { company, conversation } = conversationOf(state, 'deleteConversation', companyId, conversationId)
  company.conversations.delete(conversation.record.id)
  company.conversationList.remove(conversation)
  const ids = company.messageIds
  if (ids !== undefined) for (const message of conversation.messages.items()) ids.delete(message.id)
}
