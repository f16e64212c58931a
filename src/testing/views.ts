/**
 * Output shapes: how each stored record looks when the fake shows it, whether in a response body
 * or through an accessor of `FakeChatService`. Fields are listed explicitly (never spread from the
 * stored object), so a field added to the state never leaks into a response by accident. Each
 * view shares nested values (`metadata`) with the state: serialise it, or copy it before handing
 * it out.
 *
 * @module
 */
import { messageCount, type ConversationState } from './state.ts'
import type {
  AgentRecord,
  ConversationRecord,
  CustomerUserRecord,
  MessageRecord,
  StoredCustomerUser,
  UpdatedCustomerUserRecord,
} from './types.ts'

/** A customer user as listed (spec endpoint 2): no internal `updated_at`. */
export function customerUserView(u: StoredCustomerUser): CustomerUserRecord {
  return {
    id: u.id,
    external_id: u.external_id,
    name: u.name,
    email: u.email,
    metadata: u.metadata,
    active: u.active,
    created_at: u.created_at,
    last_seen_at: u.last_seen_at,
  }
}

/** A customer user as the fake stores it, with the internal `updated_at` (the accessors' shape). */
export function storedCustomerUserView(u: StoredCustomerUser): StoredCustomerUser {
  return { ...customerUserView(u), updated_at: u.updated_at }
}

/** The response of an update (spec endpoint 3): no `created_at` or `last_seen_at`. */
export function updatedCustomerUserView(u: StoredCustomerUser): UpdatedCustomerUserRecord {
  return {
    id: u.id,
    external_id: u.external_id,
    name: u.name,
    email: u.email,
    metadata: u.metadata,
    active: u.active,
    updated_at: u.updated_at,
  }
}

/** An agent (spec endpoint 4). */
export function agentView(a: AgentRecord): AgentRecord {
  return { id: a.id, name: a.name, active: a.active, created_at: a.created_at, updated_at: a.updated_at }
}

/** A conversation (spec endpoint 5), with the `message_count` the fake reports. */
export function conversationView(c: ConversationState): ConversationRecord {
  return {
    id: c.record.id,
    title: c.record.title,
    customer_user_id: c.record.customer_user_id,
    message_count: messageCount(c),
    created_at: c.record.created_at,
    updated_at: c.record.updated_at,
  }
}

/** A message (spec endpoint 6). */
export function messageView(m: MessageRecord): MessageRecord {
  return { id: m.id, content: m.content, role: m.role, conversation_id: m.conversation_id, created_at: m.created_at }
}
