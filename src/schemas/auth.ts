import * as z from 'zod'
import { madeOnce } from './made-once.ts'
import { idSchema, type SchemaOf } from './common.ts'

/** Parameters of `auth.issueToken` (spec, Endpoint 1). */
export type IssueTokenParams = {
  /** The calling system's id of the end user; comes back as `user.externalId`. */
  userId: string
  /** The agent to bind the token to; may be omitted. */
  agentId?: string | undefined
  /**
   * Lifetime: a positive whole number followed by `h` (hours) or `d` (days), e.g. `'1h'`, `'7d'`
   * (default 24 h). Zero and negatives are refused at run time.
   */
  expiresIn?: `${bigint}h` | `${bigint}d` | undefined
}

/** Token lifetime text (internal name: `IssueTokenParams['expiresIn']`). */
export type ExpiresIn = NonNullable<IssueTokenParams['expiresIn']>

/**
 * Result of `auth.issueToken` (spec, Endpoint 1): the signed `token`, the `user` (store `user.id`
 * for later invalidation) and the bound `agent`, which may be null or absent when no `agentId`
 * was given (the spec does not show that case).
 */
export type IssueTokenResponse = {
  /** The signed chat token. A secret: the client scrubs it from its errors and logs. */
  token: string
  /** The end user the token is for. */
  user: {
    /** Internal customer user id: store it for later token invalidation. */
    id: string
    /** The `userId` you supplied. */
    externalId: string
    /** The company of the key pair. */
    companyId: string
    /** The bound agent; may be null or absent when no `agentId` was given (the spec does not say). */
    agentId?: string | null | undefined
  }
  /** The bound agent. */
  agent?:
    | {
        /** Agent id. */
        id: string
        /** Display name. */
        name: string
        /** Whether the agent is active. */
        active: boolean
      }
    | null
    | undefined
}

/** The `user` block of a token-issuance result (internal name). */
export type TokenUser = IssueTokenResponse['user']
/** The `agent` block of a token-issuance result (internal name). */
export type TokenAgent = NonNullable<IssueTokenResponse['agent']>

/** Result of `auth.issueToken` with an `agentId`: `agent` and `user.agentId` are present (internal name: `issueToken`'s overload spells it out). */
export type BoundIssueTokenResponse = IssueTokenResponse & {
  /** The end user the token is for, with the bound agent's id. */
  user: TokenUser & { agentId: string }
  /** The bound agent. */
  agent: TokenAgent
}

/**
 * Token lifetime units this SDK sends: `h` (hours) and `d` (days), the ones the spec documents
 * (Endpoint 1). Nothing else is accepted, because a unit the service does not parse would fail
 * only at run time.
 * @internal
 */
export const EXPIRES_IN_PATTERN = /^[1-9][0-9]{0,5}[hd]$/

/** @internal */
export const issueTokenParamsSchema = madeOnce(() =>
  z.strictObject({
    userId: idSchema(),
    agentId: idSchema().optional(),
    expiresIn: z
      .string()
      .regex(EXPIRES_IN_PATTERN, 'Expected a positive whole number followed by h (hours) or d (days), such as "1h" or "7d"')
      .optional() as z.ZodType<ExpiresIn | undefined, ExpiresIn | undefined>,
  } satisfies SchemaOf<IssueTokenParams>),
)

const tokenUserShape = madeOnce(
  () =>
    ({
      id: z.string(),
      externalId: z.string(),
      companyId: z.string(),
      agentId: z.string().nullable().optional(),
    }) satisfies SchemaOf<TokenUser>,
)

const tokenAgentSchema = madeOnce(() => z.object({ id: z.string(), name: z.string(), active: z.boolean() } satisfies SchemaOf<TokenAgent>))

/** @internal */
export const issueTokenResponseSchema = madeOnce(() =>
  z.object({
    token: z.string().min(1),
    user: z.object(tokenUserShape()),
    agent: tokenAgentSchema().nullable().optional(),
  } satisfies SchemaOf<IssueTokenResponse>),
)

/** @internal */
export const boundIssueTokenResponseSchema = madeOnce(() =>
  z.object({
    token: z.string().min(1),
    user: z.object({ ...tokenUserShape(), agentId: z.string() }),
    agent: tokenAgentSchema(),
  } satisfies SchemaOf<BoundIssueTokenResponse>),
)
