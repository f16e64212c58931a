import * as z from 'zod'
import { madeOnce } from './made-once.ts'
import { pageParamsShape, type SchemaOf } from './common.ts'

/**
 * One message of a conversation (spec, Resources: Message; Endpoint 6). A `role` other than `user`
 * and `assistant` is accepted, so that a role added by a newer service does not break this SDK.
 */
export type Message = {
  /** Unique message identifier. */
  id: string
  /** Message text. */
  content: string
  /** Who wrote it: `user` (the customer user) or `assistant` (the AI agent); other strings are kept as sent. */
  role: 'user' | 'assistant' | (string & {})
  /** The conversation it belongs to. */
  conversation_id: string
  /** ISO 8601 creation time; messages are listed oldest first. */
  created_at: string
}

/** The `{ id, title }` block every page of messages carries (spec, Endpoint 6; internal name: `MessagePage['conversation']`). */
export type MessageConversation = {
  /** The conversation's id. */
  id: string
  /** The conversation's title. */
  title: string
}

/** @internal */
export const messageSchema = madeOnce(() =>
  z.object({
    id: z.string(),
    content: z.string(),
    role: z.string(),
    conversation_id: z.string(),
    created_at: z.string(),
  } satisfies SchemaOf<Message>),
)

/** @internal */
export const messageConversationSchema = madeOnce(() =>
  z.object({
    id: z.string(),
    title: z.string(),
  } satisfies SchemaOf<MessageConversation>),
)

/** @internal */
export const messageListParamsSchema = madeOnce(() => z.strictObject(pageParamsShape()))
