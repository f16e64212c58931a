import * as z from 'zod'
import { pageParamsShape } from './common.ts'

/**
 * One message of a conversation (spec, Resources: Message; Endpoint 6). `role` is `user` (from the
 * customer user) or `assistant` (from the AI agent); other strings are accepted so that a role
 * added by a newer service does not break this SDK.
 */
export const messageSchema = z.object({
  id: z.string(),
  content: z.string(),
  role: z.string(),
  conversation_id: z.string(),
  created_at: z.string(),
})

/** The `conversation` block that every page of messages carries (spec, Endpoint 6). */
export const messageConversationSchema = z.object({
  id: z.string(),
  title: z.string(),
})

/** Parameters of `conversations.messages.list`: `page` and `limit` (default 50, max 100) in the query string. */
export const messageListParamsSchema = z.strictObject({ ...pageParamsShape })
