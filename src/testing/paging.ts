/**
 * Paging, shared by every list endpoint (spec: "Pagination object", "Paging rule", "Limits").
 * Where the spec is open (`limit` above 100, malformed numbers), the fake's choices are listed in
 * TESTING.md.
 *
 * @module
 */

/** A page request. */
export interface Paging {
  page: number
  limit: number
}

/** `pagination` of a list response (spec: "Pagination object"). */
export interface Pagination {
  page: number
  limit: number
  total: number
  total_pages: number
}

/** Largest `limit` of every list operation (spec: "Limits"). */
export const MAX_LIMIT = 100

/**
 * Reads `page` (default 1) and `limit` (default `defaultLimit`) from the query; returns the
 * message of a 400 when they are invalid.
 */
export function parsePaging(query: URLSearchParams, defaultLimit: number): Paging | string {
  const page = parsePositiveInt(query, 'page', 1)
  if (typeof page === 'string') return page
  const limit = parsePositiveInt(query, 'limit', defaultLimit)
  if (typeof limit === 'string') return limit
  if (limit > MAX_LIMIT) return `limit must not exceed ${MAX_LIMIT}`
  return { page, limit }
}

function parsePositiveInt(query: URLSearchParams, name: string, fallback: number): number | string {
  const values = query.getAll(name)
  if (values.length === 0) return fallback
  if (values.length > 1) return `${name} must be given once`
  const text = values[0] as string
  if (!/^[0-9]+$/.test(text)) return `${name} must be a positive integer`
  const n = Number(text)
  if (!Number.isSafeInteger(n) || n < 1) return `${name} must be a positive integer`
  return n
}

/** One page of `items` (in list order), each shown through `view`. */
export function pageOf<T, R>(items: readonly T[], paging: Paging, view: (item: T) => R): { data: R[]; pagination: Pagination } {
  const total = items.length
  const start = (paging.page - 1) * paging.limit
  const data = start < total ? items.slice(start, start + paging.limit).map(view) : []
  return {
    data,
    pagination: { page: paging.page, limit: paging.limit, total, total_pages: Math.ceil(total / paging.limit) },
  }
}
