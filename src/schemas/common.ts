import * as z from 'zod'

/** Largest `limit` the service accepts on any list operation (spec, Limits). */
export const MAX_LIMIT = 100

/**
 * A zod schema for each property of `T`, accepting exactly the types `T` declares there: a
 * schema written with `satisfies SchemaOf<T>` next to a hand-written interface cannot drift from
 * it (a missing, extra or wider field does not compile). The interfaces are what users see.
 * @internal
 */
export type SchemaOf<T> = { [K in keyof Required<T>]: z.ZodType<T[K]> }

/** The `pagination` block of every list response (spec, Resources: Pagination object). */
export type Pagination = {
  /** Current page number, 1-based. */
  page: number
  /** Items per page. */
  limit: number
  /** Total number of items. */
  total: number
  /** Total number of pages at this `limit` (0 when there are no items). */
  total_pages: number
}

/** @internal */
export const paginationSchema = z.looseObject({
  page: z.number().int().min(1),
  limit: z.number().int().min(1),
  total: z.number().int().min(0),
  total_pages: z.number().int().min(0),
} satisfies SchemaOf<Pagination>)

/**
 * A string identifier: not empty, and well-formed Unicode (a lone surrogate cannot be
 * percent-encoded into a path). Used for path parameters, agent and user ids.
 * @internal
 */
export const idSchema = z
  .string()
  .min(1, 'Expected a non-empty id')
  .refine((id) => id.isWellFormed(), 'Expected well-formed Unicode text (this id holds a lone surrogate)')

/** `page` and `limit` of a list operation; both travel in the query string (spec, Endpoints 2, 4–6). */
export type PageParams = {
  /** 1-based page to start at (default 1); iteration starts here. */
  page?: number | undefined
  /** Items per page, 1–100 (default 20; 50 for messages). */
  limit?: number | undefined
}

/** @internal */
export const pageParamsShape = {
  page: z.number().int().min(1).optional(),
  limit: z.number().int().min(1).max(MAX_LIMIT).optional(),
} satisfies SchemaOf<PageParams>

/** Parameters of a list operation that takes only `page` and `limit`. @internal */
export const pageParamsSchema = z.strictObject(pageParamsShape)
