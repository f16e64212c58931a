import * as z from 'zod'

/** An AI chat agent of the company, active or not (spec, Resources: Agent; Endpoint 4). */
export const agentSchema = z.object({
  id: z.string(),
  name: z.string(),
  active: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
})
