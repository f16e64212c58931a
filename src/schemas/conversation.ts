import * as z from 'zod'

/** A conversation between a customer user and an agent (spec, Resources: Conversation; Endpoint 5). */
export const conversationSchema = z.object({
  id: z.string(),
  title: z.string(),
  customer_user_id: z.string(),
  message_count: z.number().int().min(0),
  created_at: z.string(),
  updated_at: z.string(),
})
