import * as z from 'zod'
import { madeOnce } from './made-once.ts'
import { pageParamsShape, type SchemaOf } from './common.ts'

/** `metadata` as the service sends it: any JSON object (nesting allowed), or `null`. */
export type CustomerUserMetadata = Record<string, unknown> | null

/**
 * A customer user: an end user of the company (spec, Resources: Customer user; Endpoint 2).
 * `name`, `email`, `metadata` and `last_seen_at` may be `null`: the spec does not show what a user
 * created by token issuance (which knows only the external id) holds in them. `Metadata` is the
 * type of `metadata`, narrowed by `client.customerUsers.withMetadata(schema)`.
 */
export type CustomerUser<Metadata = Record<string, unknown> | null> = {
  /** Internal customer user id: the `id` of `customerUsers.update`. */
  id: string
  /** The calling system's own user id (the `userId` of token issuance). */
  external_id: string
  /** Display name. */
  name: string | null
  /** E-mail address. */
  email: string | null
  /** Free-form JSON object for custom data. */
  metadata: Metadata
  /** Whether the user is active. */
  active: boolean
  /** ISO 8601 creation time. */
  created_at: string
  /** ISO 8601 time of the last activity. */
  last_seen_at: string | null
}

/**
 * A customer user as returned by an update (spec, Endpoint 3): without `created_at` and
 * `last_seen_at`, with `updated_at`.
 */
export type UpdatedCustomerUser<Metadata = Record<string, unknown> | null> = {
  /** Internal customer user id. */
  id: string
  /** The calling system's own user id. */
  external_id: string
  /** Display name. */
  name: string | null
  /** E-mail address. */
  email: string | null
  /** Free-form JSON object for custom data. */
  metadata: Metadata
  /** Whether the user is active. */
  active: boolean
  /** ISO 8601 time of this update. */
  updated_at: string
}

/**
 * Parameters of `customerUsers.list` (spec, Endpoint 2): `page` and `limit` go in the query
 * string; the filters go in the JSON body. Filtering by `external_id` is the recommended lookup.
 */
export type CustomerUserListParams = {
  /** 1-based page to start at (default 1). */
  page?: number | undefined
  /** Items per page, 1–100 (default 20). */
  limit?: number | undefined
  /** Filter by display name (exact or partial matching is the service's choice: not shown). */
  name?: string | undefined
  /** Filter by e-mail address. */
  email?: string | undefined
  /** Filter by the calling system's own user id: the recommended lookup. */
  external_id?: string | undefined
}

/**
 * The fields `customerUsers.update` can change (spec, Endpoint 3): what `update` takes. Every member
 * is optional, so that an update built up at run time type-checks; an update that gives none of
 * them (`{}`, or every member `undefined`) is refused at run time with RequestValidationError,
 * before anything is sent.
 */
export interface CustomerUserUpdateFields<Metadata = Record<string, unknown>> {
  /** New display name (non-empty). */
  name?: string | undefined
  /** New e-mail address (non-empty). */
  email?: string | undefined
  /**
   * New metadata: a plain JSON object (nesting allowed). Whether the service merges or replaces
   * it is not shown: send the full object to keep existing keys.
   */
  metadata?: Metadata | undefined
}

/**
 * {@link CustomerUserUpdateFields} with at least one of `name`, `email`, `metadata` required by the
 * compiler: for code that wants an empty update to be a type error rather than a
 * RequestValidationError. Assignable to what `customerUsers.update` takes.
 */
export type CustomerUserUpdateParams<Metadata = Record<string, unknown>> =
  | (CustomerUserUpdateFields<Metadata> & { name: string })
  | (CustomerUserUpdateFields<Metadata> & { email: string })
  | (CustomerUserUpdateFields<Metadata> & { metadata: Metadata })

/**
 * `metadata` as read: an object, not an array, or null. Checked as such only: walking every key
 * with `z.record` made it the dearest part of a page's validation.
 * @internal
 */
export const metadataSchema = madeOnce(() =>
  z
    .custom<Record<string, unknown>>((value) => value !== null && typeof value === 'object' && !Array.isArray(value), {
      message: 'Expected a JSON object',
    })
    .nullable(),
)

/** The customer-user schema with `metadata` checked by `metadata`. @internal */
export function customerUserSchemaWith<M>(metadata: z.ZodType<M>): z.ZodType<CustomerUser<M>> {
  // Loose: when a read returns the schema's output (typed metadata), fields it does not know stay.
  return z.looseObject({
    id: z.string(),
    external_id: z.string(),
    name: z.string().nullable(),
    email: z.string().nullable(),
    metadata,
    active: z.boolean(),
    created_at: z.string(),
    last_seen_at: z.string().nullable(),
  } satisfies SchemaOf<CustomerUser<M>>)
}

/** The updated-customer-user schema with `metadata` checked by `metadata`. @internal */
export function updatedCustomerUserSchemaWith<M>(metadata: z.ZodType<M>): z.ZodType<UpdatedCustomerUser<M>> {
  return z.looseObject({
    id: z.string(),
    external_id: z.string(),
    name: z.string().nullable(),
    email: z.string().nullable(),
    metadata,
    active: z.boolean(),
    updated_at: z.string(),
  } satisfies SchemaOf<UpdatedCustomerUser<M>>)
}

/** @internal */
export const customerUserListParamsSchema = madeOnce(() =>
  z.strictObject({
    ...pageParamsShape(),
    name: z.string().min(1).optional(),
    email: z.string().min(1).optional(),
    external_id: z.string().min(1).optional(),
  } satisfies SchemaOf<CustomerUserListParams>),
)

/** The update body with `metadata` checked by `metadata` (a plain JSON object at least). @internal */
export function customerUserUpdateParamsSchemaWith<M>(metadata: z.ZodType<M>): z.ZodType<CustomerUserUpdateFields<M>> {
  return z
    .strictObject({
      name: z.string().min(1, 'Expected a non-empty name').optional(),
      email: z.string().min(1, 'Expected a non-empty email').optional(),
      metadata: metadata.optional(),
    } satisfies SchemaOf<CustomerUserUpdateFields<M>>)
    .refine((params) => params.name !== undefined || params.email !== undefined || params.metadata !== undefined, {
      message:
        'Nothing to update: give at least one of name, email or metadata (an empty object, or one whose members are all undefined, changes nothing)',
    })
}

/** The customer-user schema without `withMetadata`: metadata is any JSON object, or null. @internal */
export const customerUserSchema = madeOnce(() => customerUserSchemaWith(metadataSchema()))
