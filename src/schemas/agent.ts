import * as z from 'zod'
import { madeOnce } from './made-once.ts'
import type { SchemaOf } from './common.ts'

/** An AI chat agent of the company, active or not (spec, Resources: Agent; Endpoint 4). */
export type Agent = {
  /** Unique agent identifier. */
  id: string
  /** Display name. */
  name: string
  /** Whether the agent is active; check it is true before binding the agent to a token. */
  active: boolean
  /** ISO 8601 creation time. */
  created_at: string
  /** ISO 8601 time of the last update. */
  updated_at: string
}

/** @internal */
export const agentSchema = madeOnce(() =>
  z.object({
    id: z.string(),
    name: z.string(),
    active: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
  } satisfies SchemaOf<Agent>),
)
