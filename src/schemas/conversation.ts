import * as z from 'zod'
import { madeOnce } from './made-once.ts'
import type { SchemaOf } from './common.ts'

/** A conversation between a customer user and an agent (spec, Resources: Conversation; Endpoint 5). */
export type Conversation = {
  /** Unique conversation identifier. */
  id: string
  /** Conversation title. */
  title: string
  /** The internal `id` of the customer user. */
  customer_user_id: string
  /** Number of messages in the conversation. */
  message_count: number
  /** ISO 8601 creation time. */
  created_at: string
  /** ISO 8601 time of the last update. */
  updated_at: string
}

/** @internal */
export const conversationSchema = madeOnce(() =>
  z.object({
    id: z.string(),
    title: z.string(),
    customer_user_id: z.string(),
    message_count: z.number().int().min(0),
    created_at: z.string(),
    updated_at: z.string(),
  } satisfies SchemaOf<Conversation>),
)
