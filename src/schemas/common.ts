import * as z from 'zod'
import { madeOnce } from './made-once.ts'

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
export const paginationSchema = madeOnce(() =>
  z.looseObject({
    page: z.number().int().min(1),
    limit: z.number().int().min(1),
    total: z.number().int().min(0),
    total_pages: z.number().int().min(0),
  } satisfies SchemaOf<Pagination>),
)

/**
 * Why `id` cannot be an id of the service, or `undefined` when it can: an id is not empty, is
 * well-formed Unicode (a lone surrogate cannot be percent-encoded into a path), and is not `.` or
 * `..`. Those two are dot segments: percent-encoding does not save them, because WHATWG-URL
 * parsers (Node's `URL`, the routers and proxies built on it) read `%2E` and `%2E%2E` as `.` and
 * `..` too, so `PUT /rest/v1/customer-users/%2E%2E` would reach `PUT /rest/v1/`.
 *
 * The one rule for ids, whoever supplies them: {@link idSchema} applies it to every path
 * parameter and id argument (a RequestValidationError, nothing sent), and code that puts an id
 * from a response into a path (listAll's conversation ids) asks {@link isValidId} first.
 * @internal
 */
export function idProblem(id: string): string | undefined {
  if (id.length === 0) return 'Expected a non-empty id'
  if (!id.isWellFormed()) return 'Expected well-formed Unicode text (this id holds a lone surrogate)'
  if (id === '.' || id === '..') {
    return `"${id}" cannot be an id: it is a dot segment, which URL parsers and proxies resolve (even percent-encoded) instead of sending it as an id`
  }
  return undefined
}

/**
 * Whether `value` is a string that can be used as an id, in a path or a body (see
 * {@link idProblem}, which says why not).
 * @internal
 */
export function isValidId(value: unknown): value is string {
  return typeof value === 'string' && idProblem(value) === undefined
}

/**
 * A string identifier, checked by {@link idProblem}: not empty, well-formed Unicode, not `.` or
 * `..`. Every path parameter gets it (`defineOperation`), as do agent and user ids in bodies.
 * @internal
 */
export const idSchema = madeOnce(() =>
  z
    .string()
    .min(1, 'Expected a non-empty id')
    .superRefine((id, ctx) => {
      const problem = id.length === 0 ? undefined : idProblem(id)
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem })
    }),
)

/** `page` and `limit` of a list operation; both travel in the query string (spec, Endpoints 2, 4–6). */
export type PageParams = {
  /** 1-based page to start at (default 1); iteration starts here. */
  page?: number | undefined
  /** Items per page, 1–100 (default 20; 50 for messages). */
  limit?: number | undefined
}

/** @internal */
export const pageParamsShape = madeOnce(
  () =>
    ({
      page: z.number().int().min(1).optional(),
      limit: z.number().int().min(1).max(MAX_LIMIT).optional(),
    }) satisfies SchemaOf<PageParams>,
)

/** Parameters of a list operation that takes only `page` and `limit`. @internal */
export const pageParamsSchema = madeOnce(() => z.strictObject(pageParamsShape()))

/**
 * Parameters of an operation that takes none besides its path parameters (e.g. a `get(id)`): its
 * method passes `{}`, and the pipeline still checks the options and ids. @internal
 */
export const noParamsSchema = madeOnce(() => z.strictObject({}))
