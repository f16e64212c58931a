import * as z from 'zod'
import { idSchema } from './common.ts'

/**
 * Token lifetime units this SDK sends: `h` (hours) and `d` (days), the ones the spec documents
 * (Endpoint 1). Nothing else is accepted, because a unit the service does not parse would fail
 * only at run time.
 */
export const EXPIRES_IN_PATTERN = /^[1-9][0-9]{0,5}[hd]$/

/** Parameters of `auth.issueToken` (spec, Endpoint 1). */
export const issueTokenParamsSchema = z.strictObject({
  /** The calling system's id of the end user; comes back as `user.externalId`. */
  userId: idSchema,
  /** The agent to bind the token to; may be omitted. */
  agentId: idSchema.optional(),
  /** Lifetime: a positive whole number followed by `h` or `d`, e.g. `'1h'`, `'7d'` (default 24 h). */
  expiresIn: z
    .string()
    .regex(EXPIRES_IN_PATTERN, 'Expected a positive whole number followed by h (hours) or d (days), such as "1h" or "7d"')
    .optional(),
})

/** The `user` block of a token-issuance result; `agentId` may be null or absent when no agent was bound. */
export const tokenUserSchema = z.object({
  id: z.string(),
  externalId: z.string(),
  companyId: z.string(),
  agentId: z.string().nullable().optional(),
})

/** The `agent` block of a token-issuance result. */
export const tokenAgentSchema = z.object({
  id: z.string(),
  name: z.string(),
  active: z.boolean(),
})

/**
 * Result of token issuance (spec, Endpoint 1): the signed `token`, the `user` (store `user.id` for
 * later invalidation) and the bound `agent`, which may be null or absent when no `agentId` was
 * given (the spec does not show that case).
 */
export const issueTokenResponseSchema = z.object({
  token: z.string().min(1),
  user: tokenUserSchema,
  agent: tokenAgentSchema.nullable().optional(),
})

/** Result of token issuance when an `agentId` was given: `agent` and `user.agentId` must be present. */
export const boundIssueTokenResponseSchema = z.object({
  token: z.string().min(1),
  user: tokenUserSchema.extend({ agentId: z.string() }),
  agent: tokenAgentSchema,
})
