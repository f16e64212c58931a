import type * as z from 'zod'
import type { agentSchema } from './agent.ts'
import type {
  boundIssueTokenResponseSchema,
  issueTokenParamsSchema,
  issueTokenResponseSchema,
  tokenAgentSchema,
  tokenUserSchema,
} from './auth.ts'
import type { paginationSchema } from './common.ts'
import type { conversationSchema } from './conversation.ts'
import type { customerUserListParamsSchema, customerUserSchema, updatedCustomerUserSchema } from './customer-user.ts'
import type { messageConversationSchema, messageSchema } from './message.ts'

export { agentSchema } from './agent.ts'
export {
  boundIssueTokenResponseSchema,
  issueTokenParamsSchema,
  issueTokenResponseSchema,
  tokenAgentSchema,
  tokenUserSchema,
} from './auth.ts'
export { MAX_LIMIT, pageParamsSchema, paginationSchema } from './common.ts'
export { conversationSchema } from './conversation.ts'
export {
  customerUserListParamsSchema,
  customerUserSchema,
  customerUserUpdateParamsSchema,
  updatedCustomerUserSchema,
} from './customer-user.ts'
export { jsonObjectSchema } from './json.ts'
export { messageConversationSchema, messageListParamsSchema, messageSchema } from './message.ts'

/** A customer user (spec, Resources: Customer user). Unknown extra fields the service sends are kept at run time. */
export type CustomerUser = z.infer<typeof customerUserSchema>
/** A customer user as returned by an update: no `created_at` / `last_seen_at`, has `updated_at` (spec, Endpoint 3). */
export type UpdatedCustomerUser = z.infer<typeof updatedCustomerUserSchema>
/** An agent (spec, Resources: Agent). Check `active` before binding it to a token. */
export type Agent = z.infer<typeof agentSchema>
/** A conversation (spec, Resources: Conversation). */
export type Conversation = z.infer<typeof conversationSchema>
/** `user` (from the customer user) or `assistant` (from the AI agent); other strings are kept as sent. */
export type MessageRole = 'user' | 'assistant' | (string & {})
/** A message (spec, Resources: Message). */
export type Message = Omit<z.infer<typeof messageSchema>, 'role'> & { role: MessageRole }
/** The `{ id, title }` block every page of messages carries (spec, Endpoint 6). */
export type MessageConversation = z.infer<typeof messageConversationSchema>
/** The `pagination` block of list responses (spec, Resources: Pagination object). */
export type Pagination = z.infer<typeof paginationSchema>
/** The `user` block of a token-issuance result. */
export type TokenUser = z.infer<typeof tokenUserSchema>
/** The `agent` block of a token-issuance result. */
export type TokenAgent = z.infer<typeof tokenAgentSchema>
/** Result of `auth.issueToken` (spec, Endpoint 1). `agent` may be null or absent when no `agentId` was given. */
export type IssueTokenResponse = z.infer<typeof issueTokenResponseSchema>
/** Result of `auth.issueToken` with an `agentId`: `agent` and `user.agentId` are present. */
export type BoundIssueTokenResponse = z.infer<typeof boundIssueTokenResponseSchema>

/** Token lifetime text: a positive whole number of hours (`'12h'`) or days (`'7d'`). Zero and negatives are refused at run time. */
export type ExpiresIn = `${bigint}h` | `${bigint}d`
/** Parameters of `auth.issueToken` (spec, Endpoint 1). */
export type IssueTokenParams = Omit<z.input<typeof issueTokenParamsSchema>, 'expiresIn'> & { expiresIn?: ExpiresIn }
/** `page` (1-based, default 1) and `limit` (1–100) of a list operation. */
export interface PageParams {
  /** 1-based page to start at (default 1). */
  page?: number
  /** Items per page, 1–100 (default 20; 50 for messages). */
  limit?: number
}
/** Parameters of `customerUsers.list` (spec, Endpoint 2). */
export type CustomerUserListParams = z.input<typeof customerUserListParamsSchema>
/** The fields `customerUsers.update` can change (spec, Endpoint 3). */
export interface CustomerUserUpdateFields {
  /** New display name (non-empty). */
  name?: string
  /** New e-mail address (non-empty). */
  email?: string
  /**
   * New metadata: a plain JSON object (nesting allowed). Whether the service merges or replaces
   * it is not shown: send the full object to keep existing keys.
   */
  metadata?: Record<string, unknown>
}
/** Fields of `customerUsers.update`: at least one of `name`, `email`, `metadata`. */
export type CustomerUserUpdateParams =
  | (CustomerUserUpdateFields & { name: string })
  | (CustomerUserUpdateFields & { email: string })
  | (CustomerUserUpdateFields & { metadata: Record<string, unknown> })
/** Parameters of `agents.list` (spec, Endpoint 4). */
export type AgentListParams = PageParams
/** Parameters of `conversations.list` (spec, Endpoint 5). */
export type ConversationListParams = PageParams
/** Parameters of `conversations.messages.list` (spec, Endpoint 6). */
export type MessageListParams = PageParams
