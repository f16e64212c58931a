import * as z from 'zod'

/** Largest `limit` the service accepts on any list operation (spec, Limits). */
export const MAX_LIMIT = 100

/**
 * The `pagination` block of every list response (spec, Resources: Pagination object).
 * `page` is 1-based; `total_pages` is the number of pages at the given `limit` (0 when empty).
 */
export const paginationSchema = z.object({
  page: z.number().int().min(1),
  limit: z.number().int().min(1),
  total: z.number().int().min(0),
  total_pages: z.number().int().min(0),
})

/**
 * A string identifier: not empty, and well-formed Unicode (a lone surrogate cannot be
 * percent-encoded into a path). Used for path parameters, agent and user ids.
 */
export const idSchema = z
  .string()
  .min(1, 'Expected a non-empty id')
  .refine((id) => id.isWellFormed(), 'Expected well-formed Unicode text (this id holds a lone surrogate)')

/** `page` and `limit` of every list operation; both travel in the query string (spec, Endpoints 2, 4–6). */
export const pageParamsShape = {
  /** 1-based page number to read (default 1); iteration starts here. */
  page: z.number().int().min(1).optional(),
  /** Items per page, 1–100 (default 20; 50 for messages). */
  limit: z.number().int().min(1).max(MAX_LIMIT).optional(),
}

/** Parameters of a list operation that takes only `page` and `limit`. */
export const pageParamsSchema = z.strictObject(pageParamsShape)
