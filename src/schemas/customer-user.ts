import * as z from 'zod'
import { pageParamsShape } from './common.ts'
import { jsonObjectSchema } from './json.ts'

/**
 * `metadata` as the service sends it: any JSON object (or null). Checked as "an object, not an
 * array" only: walking every key with `z.record` made it the dearest part of a page's validation.
 */
const metadataSchema = z
  .custom<Record<string, unknown>>((value) => value !== null && typeof value === 'object' && !Array.isArray(value), {
    message: 'Expected a JSON object',
  })
  .nullable()

/**
 * A customer user: an end user of the company (spec, Resources: Customer user; Endpoint 2).
 * `name`, `email`, `metadata` and `last_seen_at` also accept `null`: the spec does not show what a
 * user created by token issuance (which knows only the external id) holds in them.
 */
export const customerUserSchema = z.object({
  id: z.string(),
  external_id: z.string(),
  name: z.string().nullable(),
  email: z.string().nullable(),
  metadata: metadataSchema,
  active: z.boolean(),
  created_at: z.string(),
  last_seen_at: z.string().nullable(),
})

/**
 * What the service returns from an update (spec, Endpoint 3): the user without `created_at` and
 * `last_seen_at`, with `updated_at`.
 */
export const updatedCustomerUserSchema = customerUserSchema
  .omit({ created_at: true, last_seen_at: true })
  .extend({ updated_at: z.string() })

/**
 * Parameters of `customerUsers.list` (spec, Endpoint 2): `page` and `limit` go in the query
 * string; the filters `name`, `email` and `external_id` go in the JSON body. Filtering by
 * `external_id` is the recommended lookup.
 */
export const customerUserListParamsSchema = z.strictObject({
  ...pageParamsShape,
  /** Filter by display name (the service decides exact or partial matching: not shown). */
  name: z.string().min(1).optional(),
  /** Filter by e-mail address. */
  email: z.string().min(1).optional(),
  /** Filter by the calling system's own user id. */
  external_id: z.string().min(1).optional(),
})

/**
 * Body of `customerUsers.update` (spec, Endpoint 3). Only supplied fields are sent; at least one
 * is required. Whether `metadata` is merged or replaced is not shown: send the full object.
 */
export const customerUserUpdateParamsSchema = z
  .strictObject({
    name: z.string().min(1, 'Expected a non-empty name').optional(),
    email: z.string().min(1, 'Expected a non-empty email').optional(),
    metadata: jsonObjectSchema.optional(),
  })
  .refine((params) => params.name !== undefined || params.email !== undefined || params.metadata !== undefined, {
    message: 'Give at least one of name, email or metadata to update',
  })
