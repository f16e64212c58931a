import * as z from 'zod'
import { pageParamsShape, type PageParams, type SchemaOf } from './common.ts'

/** `user` (from the customer user) or `assistant` (from the AI agent); other strings are kept as sent. */
export type MessageRole = 'user' | 'assistant' | (string & {})

/**
 * One message of a conversation (spec, Resources: Message; Endpoint 6). A `role` other than `user`
 * and `assistant` is accepted, so that a role added by a newer service does not break this SDK.
 */
export type Message = {
  /** Unique message identifier. */
  id: string
  /** Message text. */
  content: string
  /** Who wrote it: `user` or `assistant`. */
  role: MessageRole
  /** The conversation it belongs to. */
  conversation_id: string
  /** ISO 8601 creation time; messages are listed oldest first. */
  created_at: string
}

/** The `{ id, title }` block every page of messages carries (spec, Endpoint 6). */
export type MessageConversation = {
  /** The conversation's id. */
  id: string
  /** The conversation's title. */
  title: string
}

/** Parameters of `conversations.messages.list` (spec, Endpoint 6): `limit` defaults to 50 here. */
export type MessageListParams = PageParams

/** @internal */
export const messageSchema = z.object({
  id: z.string(),
  content: z.string(),
  role: z.string(),
  conversation_id: z.string(),
  created_at: z.string(),
} satisfies SchemaOf<Message>)

/** @internal */
export const messageConversationSchema = z.object({
  id: z.string(),
  title: z.string(),
} satisfies SchemaOf<MessageConversation>)

/** @internal */
export const messageListParamsSchema = z.strictObject(pageParamsShape)
